import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import {
  acquireDataDirLock,
  acquireSync,
  DataDirLocked,
  LOCK_FILE,
  type LockHolder,
  processStartTicks,
  releaseSync
} from "../src/DataDirLock.js"
import { makeTempDir, spawnScript } from "./support/spawnHost.js"

const HOLD_LOCK = path.join(path.dirname(fileURLToPath(import.meta.url)), "support/holdLock.ts")

// Spawned processes load TypeScript through tsx: seconds each on a busy machine.
const SPAWN_TIMEOUT_MS = 120_000

const lockPath = (dir: string) => path.join(dir, LOCK_FILE)

const writeHolder = (dir: string, holder: Partial<LockHolder>) => {
  const full: LockHolder = {
    pid: 1,
    hostname: os.hostname(),
    bootId: null,
    startTicks: null,
    acquiredAt: new Date().toISOString(),
    token: "someone-else",
    ...holder
  }
  fs.writeFileSync(lockPath(dir), JSON.stringify(full))
}

const tokenOf = (result: ReturnType<typeof acquireSync>): string => {
  if (result instanceof DataDirLocked) throw new Error(`expected the lock, got: ${result.message}`)
  return result.token
}

/** The pid of a process that has certainly exited. */
const deadPid = (): number => spawnSync(process.execPath, ["-e", ""]).pid!

describe("DataDirLock", () => {
  it(
    "a second process is refused while the first holds the lock, and takes over once it is killed",
    async () => {
      const dir = makeTempDir()
      const holder = spawnScript(HOLD_LOCK, [dir])
      try {
        const line = await holder.waitForLine((l) => l.startsWith("locked ") || l.startsWith("refused "))
        assert.strictEqual(line, `locked ${holder.child.pid}`)

        const contender = spawnScript(HOLD_LOCK, [dir])
        const exit = await contender.exited
        assert.strictEqual(exit.code, 3)
        assert.include(
          exit.stdout,
          `data directory ${dir} is locked by another process (pid ${holder.child.pid})`
        )

        holder.child.kill("SIGKILL")
        await holder.exited
        const token = tokenOf(acquireSync(dir))
        const content = JSON.parse(fs.readFileSync(lockPath(dir), "utf8")) as LockHolder
        assert.strictEqual(content.pid, process.pid)
        assert.strictEqual(content.token, token)
        releaseSync(dir, token)
        assert.isFalse(fs.existsSync(lockPath(dir)))
      } finally {
        holder.child.kill("SIGKILL")
      }
    },
    SPAWN_TIMEOUT_MS
  )

  it("a lock left by a process that no longer exists is taken over", () => {
    const dir = makeTempDir()
    writeHolder(dir, { pid: deadPid() })
    const token = tokenOf(acquireSync(dir))
    releaseSync(dir, token)
  })

  it(
    "a lock naming a live pid with another start time (a reused pid) is taken over",
    async () => {
      const dir = makeTempDir()
      const other = spawnScript(HOLD_LOCK, [makeTempDir()])
      try {
        await other.waitForLine((l) => l.startsWith("locked "))
        const ticks = processStartTicks(other.child.pid!)
        assert.isNotNull(ticks, "this test needs /proc")
        writeHolder(dir, { pid: other.child.pid!, startTicks: `${Number(ticks) + 1}` })
        releaseSync(dir, tokenOf(acquireSync(dir)))
        // With the right start time the same pid is respected.
        writeHolder(dir, { pid: other.child.pid!, startTicks: ticks })
        const refused = acquireSync(dir)
        assert.instanceOf(refused, DataDirLocked)
      } finally {
        other.child.kill("SIGKILL")
      }
    },
    SPAWN_TIMEOUT_MS
  )

  it("a lock held from another host is respected, with a hint naming the file", () => {
    const dir = makeTempDir()
    writeHolder(dir, { pid: process.pid, hostname: `${os.hostname()}-elsewhere` })
    const refused = acquireSync(dir)
    assert.instanceOf(refused, DataDirLocked)
    assert.include((refused as DataDirLocked).message, `on host ${os.hostname()}-elsewhere`)
    assert.include((refused as DataDirLocked).message, lockPath(dir))
  })

  it("the same process cannot take one directory twice", () => {
    const dir = makeTempDir()
    const token = tokenOf(acquireSync(dir))
    assert.instanceOf(acquireSync(dir), DataDirLocked)
    releaseSync(dir, token)
    releaseSync(dir, tokenOf(acquireSync(dir)))
  })

  it("release leaves alone a lock that another holder took meanwhile", () => {
    const dir = makeTempDir()
    const token = tokenOf(acquireSync(dir))
    writeHolder(dir, { pid: process.pid, token: "a-newer-holder" })
    releaseSync(dir, token)
    assert.isTrue(fs.existsSync(lockPath(dir)))
  })

  it.effect("acquireDataDirLock holds the lock for its scope and releases it after", () =>
    Effect.gen(function* () {
      const dir = makeTempDir()
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* acquireDataDirLock(dir)
          assert.isTrue(fs.existsSync(lockPath(dir)))
          const second = yield* Effect.exit(Effect.scoped(acquireDataDirLock(dir)))
          assert.isTrue(Exit.isFailure(second))
        })
      )
      assert.isFalse(fs.existsSync(lockPath(dir)))
    })
  )
})

import { spawn } from "node:child_process"
import * as path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { REPO_ROOT, spawnScript } from "../../host/test/support/spawnHost.js"
import { type ClientTestHost, HOST_START_TIMEOUT_MS, startHost } from "./support/hosts.js"

/**
 * The two examples against a real host with the demo desks: the maker bot quotes the taker's RFQ,
 * the taker accepts the best ask and gets a fill split over two accounts; Ctrl-C (SIGINT) stops the
 * bot after cancelling its quotes.
 */

let host: ClientTestHost

/**
 * `npx tsx examples/<name>.ts` as the README says: tsx alone, no `--conditions` flag (the root
 * tsconfig's `paths` lead it to the sources), from the repository root.
 */
const runWithTsx = (script: string, env: Readonly<Record<string, string>>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(path.join(REPO_ROOT, "node_modules/.bin/tsx"), [script], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

beforeAll(async () => {
  host = await startHost()
}, HOST_START_TIMEOUT_MS)

afterAll(async () => {
  await host?.stop()
}, HOST_START_TIMEOUT_MS)

it("the taker trades with the maker bot and prints the allocations", async () => {
  const bot = spawnScript(path.join(REPO_ROOT, "examples/maker-bot.ts"), [], { RFQ_URL: host.url() })
  try {
    await bot.waitForLine((line) => line.includes("quoting with spread"), 120_000)
    const taker = await runWithTsx("examples/taker.ts", { RFQ_URL: host.url(), WAIT_SECONDS: "3" })
    expect(taker.stderr).toBe("")
    expect(taker.code).toBe(0)
    expect(taker.stdout).toMatch(/accepting #\d+ from maker-1/)
    expect(taker.stdout).toMatch(/allocation: account \d+ 60% 60 BTC filled/)
    expect(taker.stdout).toMatch(/allocation: account \d+ 40% 40 BTC filled/)
    expect(taker.stdout).toMatch(/RFQ \d+ filled, filled 100 BTC/)
    expect(bot.output().stdout).toMatch(/quoted bot-\d+-sell/)
  } finally {
    bot.child.kill("SIGINT")
  }
  const exit = await bot.exited
  expect(exit.code).toBe(0)
  expect(exit.stdout).toMatch(/cancelled \d+ quotes/)
}, 300_000)

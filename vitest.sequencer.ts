import * as path from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * Runs the longest test files first. Vitest's own order runs first the files its cache says were
 * slowest; on a fresh clone (CI) there is no cache, so it falls back to the largest files first,
 * and the hosts-spawning files that take one to two minutes started 5–7 minutes into the run and
 * ended it alone on one of the three workers (a run of 657 s on 2026-12-07: the forks pool's 91
 * files were 1,026 s of work on three workers, and its last 2 minutes ran fewer than three).
 *
 * The order: a file's duration in Vitest's cache when it has one (the machine's own last run),
 * otherwise its duration in `EXPECTED_SECONDS` (a fresh clone), otherwise the file's size as
 * Vitest does. Failed files still go first, as in Vitest. Only the order changes, never what runs.
 * To refresh the table: `npx vitest run --reporter=json --outputFile=/tmp/vt.json`, then take the
 * files of 10 s and more from it.
 */

/** Seconds each long file took in a full `npm test` run on a two-core VM (2026-12-07, 657 s). */
const EXPECTED_SECONDS: Readonly<Record<string, number>> = {
  "bench/test/smoke.test.ts": 130,
  "packages/spec-tests/test/spec.test.ts": 126,
  "packages/host/test/AdminBesideHost.test.ts": 71,
  "packages/spec-tests/test/rateLimit.test.ts": 70,
  "packages/spec-tests/test/cluster/ThreeHosts.test.ts": 60,
  "packages/client/test/RateLimit.test.ts": 51,
  "packages/host/test/admin.test.ts": 45,
  "packages/engine/test/storage/PgliteWorker.test.ts": 44,
  "packages/spec-tests/test/cluster/Churn.test.ts": 41,
  "packages/spec-tests/test/cluster/ExpiryRace.test.ts": 40,
  "packages/spec-tests/test/reliability/Crash.test.ts": 35,
  "packages/host/test/main.test.ts": 34,
  "packages/spec-tests/test/cluster/EventsAndLimits.test.ts": 34,
  "packages/engine/test/storage/PglitePrepared.test.ts": 28,
  "packages/spec-tests/test/cluster/HostKill.test.ts": 26,
  "packages/spec-tests/test/cluster/VenueWave.test.ts": 25,
  "packages/spec-tests/test/reliability/CursorProbe.test.ts": 18,
  "packages/host/test/AnswerNow.test.ts": 18,
  "packages/client/test/Session.test.ts": 17,
  "packages/spec-tests/test/reliability/Revocation.test.ts": 16,
  "packages/host/test/ws/WebSocketRunHost.test.ts": 15,
  "packages/spec-tests/test/reliability/DatabaseStall.test.ts": 15,
  "packages/spec-tests/test/expiry.test.ts": 14,
  "packages/spec-tests/test/reliability/HostileStrings.test.ts": 14
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const root = this.ctx.config.root
    const known = (spec: TestSpecification) => {
      const file = path.relative(root, spec.moduleId).split(path.sep).join("/")
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)
      const seconds = cached === undefined ? EXPECTED_SECONDS[file] : cached.duration / 1000
      return {
        failed: cached?.failed === true,
        seconds,
        size: this.ctx.cache.getFileStats(`${spec.project.name}:${file}`)?.size ?? 0
      }
    }
    const keyed = files.map((spec) => ({ spec, key: known(spec) }))
    keyed.sort((a, b) => {
      if (a.key.failed !== b.key.failed) return a.key.failed ? -1 : 1
      const sa = a.key.seconds ?? -1
      const sb = b.key.seconds ?? -1
      return sa !== sb ? sb - sa : b.key.size - a.key.size
    })
    return keyed.map((k) => k.spec)
  }
}

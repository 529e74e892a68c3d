import { afterAll, beforeAll, describe } from "vitest"
import { forgedTokens } from "../src/hosted/ForgedTokens.js"
import type { HostedContext } from "../src/hosted/HostControl.js"
import { expiryTapeRestart } from "../src/hosted/ExpiryTapeRestart.js"
import { mmpRestart } from "../src/hosted/MmpRestart.js"
import { restart } from "../src/hosted/Restart.js"
import { restartStatements } from "../src/hosted/RestartStatements.js"
import { portableGroups } from "../src/scenarios/index.js"
import { openWorld, type World } from "../src/World.js"
import { type Backend, backends, HOST_START_TIMEOUT_MS, startHost, type TestHost } from "./support/hosts.js"
import { register } from "./support/register.js"

/**
 * The black-box suite. With SPEC_URL set (`npm run spec-tests -- --url …`) it runs the portable
 * scenarios against that deployment; otherwise against a host it starts on each backend, one host
 * shared by every scenario, followed by the scenarios that need the host's key and a restart.
 */

interface Target {
  readonly name: string
  readonly backend?: Backend
}

const SPEC_URL = process.env.SPEC_URL
const URL_SCENARIO_TIMEOUT_MS = 600_000
const targets: ReadonlyArray<Target> =
  SPEC_URL === undefined || SPEC_URL === ""
    ? backends.map((backend) => ({ name: backend, backend }))
    : [{ name: SPEC_URL }]

for (const target of targets) {
  describe(target.name, () => {
    let host: TestHost | undefined
    let world: World
    beforeAll(async () => {
      if (target.backend !== undefined) {
        // Limits high enough for the suite, RFQs that outlive it (the restart compares them).
        host = await startHost(target.backend, { RATE_LIMIT_PER_MINUTE: "1000000", RFQ_TTL_SECONDS: "3600" })
      }
      world = await openWorld(host?.url() ?? SPEC_URL!)
    }, HOST_START_TIMEOUT_MS)
    afterAll(async () => {
      await host?.dispose()
    }, HOST_START_TIMEOUT_MS)

    // Against a deployment a scenario may wait for rate-limit windows (see ApiClient).
    register(portableGroups, () => world, target.backend === undefined ? URL_SCENARIO_TIMEOUT_MS : undefined)
    if (target.backend !== undefined) {
      register<HostedContext>(
        [forgedTokens, restart, restartStatements, expiryTapeRestart, mmpRestart],
        () => ({ world, host: host! }),
        HOST_START_TIMEOUT_MS
      )
    }
  })
}

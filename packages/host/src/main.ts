import { NodeRuntime } from "@effect/platform-node"
import { ping } from "@rfq/engine"
import { Cause, Effect } from "effect"
import { type AppServices, appAround, appLayer, appOnListening, appRoutes } from "./App.js"
import { isStartupFailure, runHost } from "./Host.js"
import { waitProfileFrom } from "./WaitProfile.js"

// RFQ_WAIT_PROFILE=<file>: where the requests' wall time goes, by phase (`WaitProfile.ts`); off, nothing changes.
const waits = waitProfileFrom(process.env)

// A start that cannot proceed prints one plain line on stderr and exits 1 (runMain's teardown);
// SIGTERM/SIGINT interrupt the program, which drains, closes the database, unlocks and exits 0.
const program = runHost<AppServices>({
  databaseLayer: appLayer,
  ping,
  routes: appRoutes,
  around: waits === undefined ? appAround : waits.around(appAround),
  onListening: appOnListening
}).pipe(
  // A defect (a bug, or a library that died instead of failing) still gets its one line.
  Effect.tapErrorCause((cause) =>
    Effect.sync(() => {
      if (Cause.isInterruptedOnly(cause)) return
      const failure = Cause.failureOption(cause)
      const line =
        failure._tag === "Some"
          ? isStartupFailure(failure.value)
            ? failure.value.message
            : String(failure.value)
          : `cannot start: ${Cause.pretty(cause).split("\n")[0]}`
      process.stderr.write(`${line}\n`)
    })
  )
)

NodeRuntime.runMain(waits === undefined ? program : waits.run(program), {
  disableErrorReporting: true,
  disablePrettyLogger: true
})

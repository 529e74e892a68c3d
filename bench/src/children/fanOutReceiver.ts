/**
 * A share of the fan-out's connections in a process of its own, driven by `fanOutClients.ts` when
 * one process would be the bottleneck (thousands of sockets). It says `ready`; on
 * `{type: "open", setup}` it opens and subscribes its connections and answers `opened`;
 * `{type: "reach", count}` is answered `reached` once that many frames arrived; `{type: "report"}`
 * is answered with the arrival times, and ends it.
 */
import { Arrivals, type ArrivalsSetup } from "../FanOutArrivals.js"
import { childConfig, runChild, tell } from "../ChildIo.js"
import type { ChildMessage } from "../Processes.js"

export interface FanOutReceiverConfig {
  readonly timeoutMs: number
}

type Command =
  | { readonly type: "open"; readonly setup: ArrivalsSetup }
  | { readonly type: "reach"; readonly count: number }
  | { readonly type: "report" }

runChild(async () => {
  // A driver that died must not leave thousands of sockets open behind it.
  process.on("disconnect", () => process.exit())
  const config = childConfig<FanOutReceiverConfig>()
  let arrivals: Arrivals | undefined
  await new Promise<void>((resolve, reject) => {
    const fail = (error: unknown) => {
      process.off("message", listener)
      reject(error)
    }
    // Registered before `ready`: nothing the parent sends can arrive unheard.
    const listener = (message: ChildMessage) => {
      const command = message as Command
      if (command.type === "open") {
        Arrivals.open(command.setup).then((opened) => {
          arrivals = opened
          return tell({ type: "opened" })
        }, fail)
      } else if (command.type === "reach") {
        if (arrivals === undefined) return fail(new Error("reach before open"))
        arrivals.reach(command.count, config.timeoutMs).then(() => tell({ type: "reached" }), fail)
      } else if (command.type === "report") {
        process.off("message", listener)
        resolve()
      }
    }
    process.on("message", listener)
    void tell({ type: "ready" })
  })
  if (arrivals === undefined) throw new Error("report before open")
  arrivals.close()
  await tell(arrivals.report())
})

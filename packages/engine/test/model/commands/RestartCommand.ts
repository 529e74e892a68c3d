import type * as fc from "fast-check"
import { assertSystemMatches } from "../assertSystem.js"
import type { RfqModel } from "../RfqModel.js"
import type { RfqSystem } from "../RfqSystem.js"

/** The engine stops and a new one starts on the same database: nothing observable changes. */
export class RestartCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  check = () => true
  async run(m: RfqModel, r: RfqSystem) {
    await r.restart()
    await assertSystemMatches(m, r)
  }
  toString = () => "Restart"
}

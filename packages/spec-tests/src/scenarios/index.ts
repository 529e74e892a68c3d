import type { ScenarioGroup } from "../Scenario.js"
import { account } from "./Account.js"
import { authentication } from "./Authentication.js"
import { bulkBlockTrades } from "./BulkBlockTrades.js"
import { docStatements } from "./DocStatements.js"
import { expiryAndTape } from "./ExpiryAndTape.js"
import { futures } from "./Futures.js"
import { futuresRpc } from "./FuturesRpc.js"
import { httpSurface } from "./Http.js"
import { lists } from "./Lists.js"
import { mmp } from "./Mmp.js"
import { moneyRules } from "./MoneyRules.js"
import { quotes } from "./Quotes.js"
import { rfqs } from "./Rfqs.js"
import { settlement } from "./Settlement.js"
import { splitSimulation } from "./SplitSimulation.js"
import { visibility } from "./Visibility.js"

/** The scenarios that need nothing but a URL: the suite users run against a deployment. */
export const portableGroups: ReadonlyArray<ScenarioGroup> = [
  httpSurface,
  authentication,
  visibility,
  rfqs,
  quotes,
  settlement,
  lists,
  account,
  bulkBlockTrades,
  moneyRules,
  splitSimulation,
  futures,
  futuresRpc,
  expiryAndTape,
  mmp,
  docStatements
]

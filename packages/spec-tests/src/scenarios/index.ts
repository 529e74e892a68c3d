import type { ScenarioGroup } from "../Scenario.js"
import { account } from "./Account.js"
import { authentication } from "./Authentication.js"
import { httpSurface } from "./Http.js"
import { lists } from "./Lists.js"
import { quotes } from "./Quotes.js"
import { rfqs } from "./Rfqs.js"
import { settlement } from "./Settlement.js"
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
  account
]

import { Effect } from "effect"
import type { CredentialsRow } from "../accounts/AccountStore.js"
import type { CreateRfqRequest } from "../api/RfqRequests.js"
import { apiError } from "../domain/Errors.js"
import type { SettlementOption } from "../domain/Primitives.js"
import { Venues } from "../services/Venues.js"
import { decString } from "./Dec.js"
import type { SettlementAccount } from "./RfqRecord.js"

const fail = Effect.fail

/**
 * The accounts a new RFQ settles to on each of its options: `settlementAccounts` if given (every
 * option then needs its list; split rules 1–3 were checked by the request schema), else
 * `settlementCredentials`, else the desk's default credentials for that venue, each at 100 %. Every
 * account must be the desk's own, for that venue, with BlockRFQ and BlockTrade access there.
 */
export const resolveSettlementAccounts = (
  req: Pick<CreateRfqRequest, "settlementOptions" | "settlementAccounts" | "settlementCredentials">,
  desk: ReadonlyArray<CredentialsRow>
) =>
  Effect.gen(function* () {
    const venues = yield* Venues
    const settlementAccounts: Partial<Record<SettlementOption, ReadonlyArray<SettlementAccount>>> = {}
    for (const option of req.settlementOptions) {
      const split = req.settlementAccounts?.[option]
      const single = req.settlementAccounts === undefined ? req.settlementCredentials?.[option] : undefined
      let list: ReadonlyArray<SettlementAccount>
      if (split !== undefined) {
        list = split.map((a) => ({ credentialsId: a.credentialsId, percentage: decString(a.percentage) }))
      } else if (single !== undefined) {
        list = [{ credentialsId: single, percentage: "100" }]
      } else if (req.settlementAccounts !== undefined) {
        return yield* fail(
          apiError(
            "invalidRequest",
            `settlementAccounts.${option}: accounts are required for every settlement option`
          )
        )
      } else {
        const fallback =
          desk.find((c) => c.exchange === option && c.isExchangeDefault) ??
          desk.find((c) => c.exchange === option)
        if (fallback === undefined) {
          return yield* fail(
            apiError(
              "invalidRequest",
              `settlementCredentials.${option}: the desk has no ${option} credentials`
            )
          )
        }
        list = [{ credentialsId: fallback.id, percentage: "100" }]
      }
      for (const account of list) {
        const row = desk.find((c) => c.id === account.credentialsId)
        if (row === undefined) {
          return yield* fail(apiError("credentialsNotFound", `credentialsId ${account.credentialsId}`))
        }
        if (row.exchange !== option) {
          return yield* fail(
            apiError(
              "invalidRequest",
              `credentialsId ${row.id} (${row.alias}) is for ${row.exchange}, not ${option}`
            )
          )
        }
        const permissions = yield* venues.permissions(option, {
          credentialsId: row.id,
          clientId: row.clientId
        })
        if (!permissions.blockRfq || !permissions.blockTrade) {
          return yield* fail(
            apiError(
              "invalidRequest",
              `credentialsId ${row.id} (${row.alias}) needs read/write access for BlockRFQ and BlockTrade on ${option}`
            )
          )
        }
      }
      settlementAccounts[option] = list
    }
    return settlementAccounts
  })

import { Schema } from "effect"
import { BaseCurrency } from "../domain/Primitives.js"
import { Count, Decimal, optional, responseObject, Text, Timestamp } from "./ResponseFields.js"

/** Response schemas of market-maker protection. */

export const MmpConfig = responseObject("MmpConfig", "A maker desk's protection in one base currency.", {
  baseCurrency: BaseCurrency,
  intervalMs: Count,
  frozenMs: Count,
  amountLimit: optional(Decimal),
  deltaLimit: optional(Decimal),
  tradeCountLimit: optional(Count)
})
export const MmpConfigList = Schema.Array(MmpConfig).annotations({
  identifier: "MmpConfigList",
  description: "The desk's configs, one per base currency."
})

export const MmpWindow = responseObject("MmpWindow", "The fills in the current window.", {
  amount: Decimal.annotations({ description: "Sum of the traded amounts." }),
  delta: Decimal.annotations({ description: "Sum of the fills' absolute deltas, in base currency." }),
  trades: Count.annotations({ description: "Number of fills." })
})

export const MmpStatus = responseObject("MmpStatus", "The protection's state in one base currency.", {
  baseCurrency: BaseCurrency,
  frozen: Schema.Boolean,
  frozenUntil: optional(
    Timestamp.annotations({ description: "When the freeze ends; absent: until a reset." })
  ),
  window: MmpWindow
})
export const MmpStatusList = Schema.Array(MmpStatus).annotations({
  identifier: "MmpStatusList",
  description: "One element per configured base currency."
})

export const MmpDeleteResponse = responseObject("MmpDeleteResponse", "Answer of `DELETE /mmp/config`.", {
  message: Text
})

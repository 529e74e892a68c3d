import { Schema } from "effect"
import * as AccountRequests from "../../src/api/AccountRequests.js"
import * as AccountResponses from "../../src/api/AccountResponses.js"
import * as AuthRequests from "../../src/api/AuthRequests.js"
import * as AuthResponses from "../../src/api/AuthResponses.js"
import * as Queries from "../../src/api/Queries.js"
import * as QuoteRequests from "../../src/api/QuoteRequests.js"
import * as QuoteResponses from "../../src/api/QuoteResponses.js"
import * as RfqRequests from "../../src/api/RfqRequests.js"
import * as RfqResponses from "../../src/api/RfqResponses.js"

const schemasOf = (module: Record<string, unknown>): Array<[string, Schema.Schema<unknown, unknown>]> =>
  Object.entries(module).filter((entry): entry is [string, Schema.Schema<unknown, unknown>] =>
    Schema.isSchema(entry[1])
  )

/** Every schema exported by the request modules (objects, parts and parameters). */
export const requestSchemas = [RfqRequests, QuoteRequests, Queries, AccountRequests, AuthRequests].flatMap(
  schemasOf
)

/** Every schema exported by the response modules. */
export const responseSchemas = [RfqResponses, QuoteResponses, AccountResponses, AuthResponses].flatMap(
  schemasOf
)

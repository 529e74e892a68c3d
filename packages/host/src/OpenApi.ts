import { ErrorBody, OAuthTokenResponse, AuthResponse, TokenErrorBody } from "@rfq/engine"
import { JSONSchema, type Schema } from "effect"
import type { Operation } from "./Operations.js"

/**
 * The OpenAPI 3.1 document, generated from the very schemas that decode requests and describe
 * responses (one source: the operation table), so the document cannot drift from the behaviour.
 */
const summaries: Record<string, string> = {
  "v1/account/exchange-credentials": "List the desk's exchange credentials",
  "v1/account/exchange-credentials/get": "Get exchange credentials with the decrypted secret",
  "v1/account/exchange-credentials/create": "Add exchange credentials (alias unique per desk)",
  "v1/account/exchange-credentials/delete": "Delete exchange credentials",
  "v1/account/otc-counterparty": "List OTC counterparties",
  "v1/block-trade/bulk": "Create several block trades in one request",
  "v1/exchange/maker": "List makers and their settlement options",
  "v1/exchange/instruments": "List instruments usable as legs on a settlement option",
  "v1/rfq/list": "List RFQs (newest first, keyset cursor)",
  "v1/quote/list": "List the caller's quotes as maker",
  "v1/rfq/get": "Get one RFQ",
  "v1/rfq/create": "Create an RFQ (the path id is an idempotency key; 0 = none)",
  "v1/rfq/delete": "Delete a cancelled RFQ",
  "v1/rfq/cancel": "Cancel an open RFQ",
  "v1/rfq/quotes": "The taker's quote book of an RFQ, per settlement option",
  "v1/rfq/trade": "Accept a quote: trade and settle the RFQ",
  "v1/rfq/leg-prices": "Leg prices for a strategy price",
  "v1/quote/create": "Create a quote",
  "v1/quote/update": "Update a quote (by rfqQuoteId or label)",
  "v1/quote/delete": "Delete a quote (by rfqQuoteId or label)",
  "v1/quote/cancel-all": "Cancel the caller's quotes (all, per RFQ, or per base currency)"
}

type Json = Record<string, unknown>

export const makeOpenApiDocument = (
  operations: ReadonlyArray<Operation>,
  info: { readonly version: string }
) => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const toJson = (schema: Schema.Schema<any, any>) =>
    JSONSchema.fromAST(schema.ast, {
      definitions,
      definitionPath: "#/components/schemas/",
      target: "openApi3.1",
      // Unknown request fields are ignored, not refused.
      additionalPropertiesStrategy: "allow"
    }) as unknown as Json
  const errorResponse = (description: string) => ({
    description,
    content: { "application/json": { schema: toJson(ErrorBody) } }
  })
  const errors = {
    "400": errorResponse("Invalid parameters or validation failure"),
    "401": errorResponse("Missing or invalid authentication token"),
    "403": errorResponse("Insufficient permissions"),
    "404": errorResponse("Resource not found"),
    "429": errorResponse("Rate limit exceeded"),
    "500": errorResponse("Server-side error")
  }
  const paths: Record<string, Record<string, Json>> = {}
  for (const op of operations) {
    const input = toJson(op.input)
    const props = (input.properties ?? {}) as Record<string, Json>
    const required = new Set((input.required ?? []) as Array<string>)
    const pathParams = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
    const parameters: Array<Json> = pathParams.map((name) => ({
      name,
      in: "path",
      required: true,
      schema: props[name] ?? { type: "integer" }
    }))
    if (op.from === "query") {
      for (const [name, schema] of Object.entries(props)) {
        if (!pathParams.includes(name))
          parameters.push({ name, in: "query", required: required.has(name), schema })
      }
    }
    const body =
      op.from === "body"
        ? {
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: {
                    ...input,
                    properties: Object.fromEntries(
                      Object.entries(props).filter(([k]) => !pathParams.includes(k))
                    ),
                    required: [...required].filter((k) => !pathParams.includes(k))
                  }
                }
              }
            }
          }
        : {}
    const entry: Json = {
      operationId: op.rpc.replace(/^v1\//, "").replace(/[/-](.)/g, (_m, c: string) => c.toUpperCase()),
      summary: summaries[op.rpc] ?? op.rpc,
      description: `Also available over JSON-RPC as \`${op.rpc}\`.`,
      security: [{ bearer: [] }],
      parameters,
      ...body,
      responses: {
        "200": { description: "Success", content: { "application/json": { schema: toJson(op.output) } } },
        ...errors
      }
    }
    const path = op.path
    paths[path] = { ...(paths[path] ?? {}), [op.method.toLowerCase()]: entry }
  }
  paths["/oauth/token"] = {
    post: {
      operationId: "oauthToken",
      summary: "Token endpoint: client_credentials and refresh_token grants (form-encoded)",
      security: [],
      requestBody: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: {
              type: "object",
              required: ["grant_type"],
              properties: {
                grant_type: { type: "string", enum: ["client_credentials", "refresh_token"] },
                client_id: { type: "string" },
                client_secret: { type: "string" },
                refresh_token: { type: "string" }
              }
            }
          }
        }
      },
      responses: {
        "200": {
          description: "Tokens",
          content: { "application/json": { schema: toJson(OAuthTokenResponse) } }
        },
        "400": {
          description: "Malformed request",
          content: { "application/json": { schema: toJson(TokenErrorBody) } }
        },
        "401": {
          description: "Invalid client or grant",
          content: { "application/json": { schema: toJson(TokenErrorBody) } }
        },
        "429": errorResponse(
          "Rate limit exceeded: requests per address, or failed client-secret checks per address or client id (then with Retry-After; the secret is not checked)"
        )
      }
    }
  }
  paths["/v1/auth"] = {
    post: {
      operationId: "auth",
      summary: "Token request with client credentials (JSON); access token valid 3600 s",
      security: [],
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["clientId", "clientSecret"],
              properties: { clientId: { type: "string" }, clientSecret: { type: "string" } }
            }
          }
        }
      },
      responses: {
        "200": { description: "Token", content: { "application/json": { schema: toJson(AuthResponse) } } },
        ...errors
      }
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "RFQ service",
      version: info.version,
      description:
        "Request-for-quote trading of crypto option and future block trades. Errors use the body `{code, message, reason?}`; every response carries `X-RateLimit-*` headers."
    },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      schemas: definitions
    },
    paths
  }
}

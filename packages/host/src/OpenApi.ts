import {
  AuthRequest,
  AuthResponse,
  type Endpoint,
  ErrorBody,
  OAuthTokenRequest,
  OAuthTokenResponse,
  TokenErrorBody
} from "@rfq/engine"
import { authenticationTag, tagOf, tagsUsed } from "./ApiTags.js"
import { type Json, makeJsonSchemas } from "./JsonSchemas.js"
import { errorResponses, jsonResponse, makeOperation, rateLimitHeaderRefs } from "./OpenApiOperation.js"
import { tokenEndpointErrors } from "./OperationErrors.js"

/**
 * The OpenAPI 3.1 document (`GET /v1/openapi.json`), generated from the endpoint table and the very
 * schemas that decode requests and encode answers, so it cannot drift from the behaviour. Built
 * once at start; `servers` is filled per request (`ContractRoutes.ts`). What each operation holds
 * is `OpenApiOperation.ts`; how schemas become JSON Schema is `JsonSchemas.ts`. A client generated
 * from it by a third-party generator type-checks a call of every operation
 * (`packages/host/test/contracts/GeneratedClient.test.ts`).
 */

export interface OpenApiInfo {
  readonly version: string
  /** The server URL; the host serves the document with the URL the request came in on. */
  readonly serverUrl?: string
}

/** Where a client reaches this service when nothing better is known. */
export const defaultServerUrl = "http://127.0.0.1:8080"

const headers = {
  "X-RateLimit-Limit": {
    description: "Requests allowed per one-minute window.",
    schema: { type: "integer", minimum: 0 }
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in the current window.",
    schema: { type: "integer", minimum: 0 }
  },
  "X-RateLimit-Reset": {
    description: "End of the current window, unix seconds.",
    schema: { type: "integer", minimum: 0 }
  },
  "Retry-After": {
    description: "Seconds until failed client-secret checks are allowed again.",
    schema: { type: "integer", minimum: 1 }
  }
}

export const makeOpenApiDocument = (operations: ReadonlyArray<Endpoint>, info: OpenApiInfo) => {
  const schemas = makeJsonSchemas("openApi3.1")
  const errorBody = schemas.of(ErrorBody)
  const paths: Record<string, Record<string, Json>> = {}
  for (const op of operations) {
    paths[op.path] = { ...paths[op.path], [op.method.toLowerCase()]: makeOperation(op, schemas, errorBody) }
  }
  const tokenError = schemas.of(TokenErrorBody)
  const tokenErrors = errorResponses(tokenEndpointErrors, errorBody)
  for (const status of ["400", "401"])
    tokenErrors[status] = {
      ...(tokenErrors[status] as Json),
      content: { "application/json": { schema: tokenError } }
    }
  tokenErrors["429"] = {
    ...(tokenErrors["429"] as Json),
    headers: { ...rateLimitHeaderRefs, "Retry-After": { $ref: "#/components/headers/Retry-After" } }
  }
  const tokenForm = schemas.objectOf(OAuthTokenRequest)
  const tokenRequest = schemas.define("OAuthTokenRequest", {
    type: "object",
    title: "OAuthTokenRequest",
    description:
      "Fields of `POST /oauth/token`. `client_id` and `client_secret` are required unless sent as HTTP Basic credentials (not both); `refresh_token` with `grant_type=refresh_token`.",
    properties: tokenForm?.properties ?? {},
    required: ["grant_type"]
  })
  paths["/oauth/token"] = {
    post: {
      operationId: "oauthToken",
      summary: "Token endpoint: client_credentials and refresh_token grants",
      description:
        "Access tokens of 300 s and one-time rotating refresh tokens of 1800 s (docs/auth.md). Form-encoded (RFC 6749) or JSON.",
      tags: [authenticationTag.name],
      security: [{}, { clientBasic: [] }],
      requestBody: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: tokenRequest,
            example: {
              grant_type: "client_credentials",
              client_id: "demo-taker",
              client_secret: "demo-taker-secret"
            }
          },
          "application/json": {
            schema: tokenRequest,
            example: {
              grant_type: "client_credentials",
              client_id: "demo-taker",
              client_secret: "demo-taker-secret"
            }
          }
        }
      },
      responses: { "200": jsonResponse("Tokens", schemas.of(OAuthTokenResponse)), ...tokenErrors }
    }
  }
  paths["/v1/auth"] = {
    post: {
      operationId: "auth",
      summary: "Token request with client credentials (JSON); access token valid 3600 s",
      tags: [authenticationTag.name],
      security: [],
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: schemas.of(AuthRequest),
            example: { clientId: "demo-taker", clientSecret: "demo-taker-secret" }
          }
        }
      },
      responses: { "200": jsonResponse("Token", schemas.of(AuthResponse)), ...tokenErrors }
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "RFQ service",
      version: info.version,
      description:
        "Request-for-quote trading of crypto option and future block trades. Errors use the body `{code, message, reason?}` with `code` equal to the HTTP status; every response carries `X-RateLimit-*` headers. Objects ignore unknown fields except the settlement-option maps, which refuse them (`additionalProperties: false`). The same operations are JSON-RPC methods over the WebSocket at `/ws/v1`, described by `/v1/asyncapi.json`."
    },
    servers: [{ url: info.serverUrl ?? defaultServerUrl, description: "This service" }],
    tags: tagsUsed([authenticationTag, ...operations.map((op) => tagOf(op.rpc))]),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        clientBasic: {
          type: "http",
          scheme: "basic",
          description: "Client id and secret as HTTP Basic credentials (token endpoint only)."
        }
      },
      headers,
      schemas: schemas.components(paths)
    }
  }
}

export type OpenApiDocument = ReturnType<typeof makeOpenApiDocument>

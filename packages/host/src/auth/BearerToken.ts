import { type ApiError, apiError } from "@rfq/engine"
import { Either } from "effect"

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1): the scheme in any case,
 * exactly one space, then one b64token. No header, a blank one, or the scheme alone is
 * `missing bearer token`; anything else that does not fit (another scheme, extra spaces, two
 * headers joined by a comma) is `invalid authorization header`.
 */
const bearer = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i
const schemeOnly = /^Bearer\s*$/i

export const parseBearerToken = (header: string | undefined): Either.Either<string, ApiError> => {
  if (header === undefined || header.trim() === "" || schemeOnly.test(header)) {
    return Either.left(apiError("missingBearerToken"))
  }
  const match = bearer.exec(header)
  return match === null ? Either.left(apiError("invalidAuthorizationHeader")) : Either.right(match[1]!)
}

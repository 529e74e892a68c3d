/**
 * A deliberately plain HTTP client for the reliability runs: every answer comes back as status,
 * parsed body (or undefined) and raw text, and a transport failure (the host was killed mid-request)
 * is a rejected promise, never an answer. Whatever is not answered is not acknowledged.
 */
export interface Answer {
  readonly status: number
  readonly body: unknown
  readonly text: string
  readonly headers: Headers
}

export interface RequestOptions {
  readonly token?: string | undefined
  /** An object is sent as JSON; a string or bytes as they are. */
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
  readonly timeoutMs?: number
}

export const call = async (
  base: string,
  method: string,
  path: string,
  options: RequestOptions = {}
): Promise<Answer> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  let body: string | Uint8Array | undefined
  if (typeof options.body === "string" || options.body instanceof Uint8Array) body = options.body
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers["content-type"] ??= "application/json"
  }
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000)
  })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, body: parsed, text, headers: response.headers }
}

/** The standard error body `{code, message, reason?}` with `code` equal to the status. */
export const isStandardError = (answer: Answer): boolean => {
  const b = answer.body as { code?: unknown; message?: unknown; reason?: unknown } | undefined
  return (
    typeof b === "object" &&
    b !== null &&
    b.code === answer.status &&
    typeof b.message === "string" &&
    b.message !== "" &&
    (b.reason === undefined || (Array.isArray(b.reason) && b.reason.every((r) => typeof r === "string")))
  )
}

export class UnexpectedAnswer extends Error {
  constructor(
    readonly what: string,
    readonly answer: Answer
  ) {
    super(`${what}: ${answer.status} ${answer.text.slice(0, 500)}`)
  }
}

/** The body of a 200, or an `UnexpectedAnswer`. */
export const ok = async <A>(what: string, answer: Promise<Answer>): Promise<A> => {
  const a = await answer
  if (a.status !== 200) throw new UnexpectedAnswer(what, a)
  return a.body as A
}

/** An access token from `POST /v1/auth` (3600 s). */
export const tokenFor = async (
  base: string,
  clientId: string,
  secret = `${clientId}-secret`
): Promise<string> => {
  const body = await ok<{ access_token: string }>(
    `token for ${clientId}`,
    call(base, "POST", "/v1/auth", { body: { clientId, clientSecret: secret } })
  )
  return body.access_token
}

/** The client credentials grant of `/oauth/token`: access and refresh token. */
export const oauthToken = async (
  base: string,
  clientId: string,
  secret = `${clientId}-secret`
): Promise<{ access_token: string; refresh_token: string }> =>
  ok(
    `oauth token for ${clientId}`,
    call(base, "POST", "/oauth/token", {
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: clientId,
        client_secret: secret
      }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
  )

export const oauthRefresh = (
  base: string,
  clientId: string,
  refreshToken: string,
  secret = `${clientId}-secret`
) =>
  call(base, "POST", "/oauth/token", {
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: clientId,
      client_secret: secret
    }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" }
  })

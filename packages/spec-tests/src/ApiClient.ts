import * as http from "node:http"

/**
 * A small HTTP client for black-box checks: every call answers status, headers and the parsed body
 * (and the raw text), never throws on an HTTP status. Only a transport failure throws.
 */
export interface ApiResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The JSON body, or undefined when the text is not JSON. */
  readonly body: unknown
}

export type Query = Readonly<Record<string, string | number | boolean | undefined>>

export interface RequestOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string
  readonly query?: Query
  /** Sent as JSON. */
  readonly json?: unknown
  /** Sent as is (malformed JSON, forms, large bodies). */
  readonly raw?: string | Uint8Array
  readonly headers?: Readonly<Record<string, string>>
}

export interface ApiClientOptions {
  /**
   * On a 429, wait for the window the server names in `X-RateLimit-Reset` and send again (a 429 is
   * decided before the operation runs, so resending never repeats an effect). Lets the suite run
   * against a deployment with the default limit; off for the rate-limit checks themselves.
   */
  readonly retryOnRateLimit?: boolean
}

const parseJson = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The longest wait for a rate-limit window: one minute and a little. */
const MAX_RATE_LIMIT_WAIT_MS = 65_000
const MAX_RATE_LIMIT_RETRIES = 3

export class ApiClient {
  readonly baseUrl: string

  constructor(
    baseUrl: string,
    readonly options: ApiClientOptions = {}
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "")
  }

  url(path: string, query?: Query): string {
    const search = new URLSearchParams()
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) search.append(key, String(value))
    }
    const qs = search.toString()
    return `${this.baseUrl}${path}${qs === "" ? "" : `?${qs}`}`
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    for (let attempt = 0; ; attempt++) {
      const response = await this.once(method, path, options)
      if (response.status !== 429 || this.options.retryOnRateLimit !== true) return response
      if (attempt >= MAX_RATE_LIMIT_RETRIES) return response
      const reset = Number(response.headers.get("x-ratelimit-reset"))
      const wait = Number.isFinite(reset) ? reset * 1000 - Date.now() + 250 : 5_000
      await sleep(Math.min(Math.max(wait, 100), MAX_RATE_LIMIT_WAIT_MS))
    }
  }

  private async once(method: string, path: string, options: RequestOptions): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
    let body: string | Uint8Array | undefined
    if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers["content-type"] ??= "application/json"
    } else if (options.raw !== undefined) {
      body = options.raw
    }
    // fetch refuses a body on GET; the spec allows one (`{}`), so those go through node:http.
    if (body !== undefined && (method === "GET" || method === "HEAD")) {
      return rawRequest(method, this.url(path, options.query), headers, body)
    }
    const response = await fetch(this.url(path, options.query), {
      method,
      headers,
      ...(body === undefined ? {} : { body })
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, body: parseJson(text) }
  }

  get(path: string, options?: RequestOptions) {
    return this.request("GET", path, options)
  }
  post(path: string, options?: RequestOptions) {
    return this.request("POST", path, options)
  }
  put(path: string, options?: RequestOptions) {
    return this.request("PUT", path, options)
  }
  delete(path: string, options?: RequestOptions) {
    return this.request("DELETE", path, options)
  }
}

/** One request over node:http, for what fetch will not send. */
export const rawRequest = (
  method: string,
  url: string,
  headers: Readonly<Record<string, string>>,
  body?: string | Uint8Array
): Promise<ApiResponse> =>
  new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method,
        headers: {
          ...headers,
          ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) })
        }
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", reject)
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          const out = new Headers()
          for (const [name, value] of Object.entries(response.headers)) {
            if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(", ") : value)
          }
          resolve({ status: response.statusCode ?? 0, headers: out, text, body: parseJson(text) })
        })
      }
    )
    request.on("error", reject)
    if (body !== undefined) request.write(body)
    request.end()
  })

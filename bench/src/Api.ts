import * as http from "node:http"

/**
 * A small JSON client over node:http with keep-alive, for the measured loops whose baseline is
 * bare HTTP or a bare socket (the lifecycle's steps, the fan-out's trigger, the forwarded requests)
 * and the one-hour tokens that raw paths hold. It costs less than half of `@rfq/client`'s CPU per
 * call (scenario 7), so it is what stays in a timed loop; set-up goes through `BenchClient.ts`.
 * It throws on anything but a 2xx so that a broken run never reports figures.
 */
export class Api {
  private readonly agent: http.Agent
  private readonly base: URL

  constructor(baseUrl: string, maxSockets = 64) {
    this.base = new URL(baseUrl)
    this.agent = new http.Agent({ keepAlive: true, maxSockets })
  }

  request<T = any>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
      const req = http.request(
        {
          agent: this.agent,
          host: this.base.hostname,
          port: this.base.port,
          method,
          path,
          headers: {
            ...(payload === undefined
              ? {}
              : { "content-type": "application/json", "content-length": String(payload.length) }),
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
          }
        },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => chunks.push(chunk))
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            const status = res.statusCode ?? 0
            if (status < 200 || status >= 300) {
              return reject(
                new ApiFailure(`${method} ${path} answered ${status}: ${text.slice(0, 300)}`, status, text)
              )
            }
            try {
              resolve(text === "" ? (undefined as T) : (JSON.parse(text) as T))
            } catch (error) {
              reject(error)
            }
          })
          res.on("error", reject)
        }
      )
      req.on("error", reject)
      req.end(payload)
    })
  }

  /**
   * A one-hour access token (`POST /v1/auth`) for a demo client, for a raw path that holds its
   * token for the whole run (a load generator, WebSocket sessions that would be closed with 4001
   * when it expires). `@rfq/client` logs in with `POST /oauth/token` (300 s) and renews its token
   * itself, which a raw loop does not.
   */
  async token(clientId: string): Promise<string> {
    const answer = await this.request<{ access_token: string }>("POST", "/v1/auth", {
      clientId,
      clientSecret: `${clientId}-secret`
    })
    return answer.access_token
  }

  close(): void {
    this.agent.destroy()
  }
}

export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body: string
  ) {
    super(message)
  }
}

export const DEMO_TAKER = "demo-taker"
export const DEMO_MAKERS = ["demo-maker-1", "demo-maker-2", "demo-maker-3"] as const

/** The brief's RFQ: a 50 BTC 90000/110000 call spread on DBT, all three demo makers invited. */
export const demoRfq = {
  baseCurrency: "BTC",
  amount: 50,
  anonymous: false,
  settlementOptions: ["DBT"],
  makers: { DBT: ["maker-1", "maker-2", "maker-3"] },
  legs: [
    { direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 },
    { direction: "sell", instrumentName: "BTC-27DEC30-110000-C", ratio: 1 }
  ]
} as const

export interface PricedLeg {
  readonly instrumentName: string
  readonly price: number
}

/** The brief's quote body: sell the structure, 50, on DBT. */
export const quoteBody = (rfqId: number, legs: ReadonlyArray<PricedLeg>) => ({
  rfqId,
  direction: "sell" as const,
  amount: 50,
  settlementOption: "DBT" as const,
  legs
})

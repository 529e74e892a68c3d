/**
 * The ceiling: a raw uWebSockets.js server that answers every GET with fixed bytes (the host's
 * own answer to `GET /v1/rfq/{id}`, captured by the scenario) and, on `/ws`, a WebSocket whose
 * sockets all subscribe to one topic that `POST /publish` publishes a fixed frame to.
 */
import uWS from "uWebSockets.js"
import { childConfig, runChild, tell } from "../ChildIo.js"

export interface HelloUwsConfig {
  readonly body: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  /** The frame `POST /publish` sends to every WebSocket subscriber. */
  readonly frame?: string
}

runChild(
  async () => {
    const config = childConfig<HelloUwsConfig>()
    const body = Buffer.from(config.body)
    const frame = Buffer.from(config.frame ?? "")
    const app = uWS
      .App()
      .get("/*", (res) => {
        res.cork(() => {
          res.writeStatus("200 OK")
          for (const [name, value] of config.headers) res.writeHeader(name, value)
          res.end(body)
        })
      })
      .post("/publish", (res) => {
        res.onAborted(() => undefined)
        // Drains the (empty) body first so the trigger costs what a tiny POST costs anywhere.
        res.onData((_chunk, last) => {
          if (!last) return
          app.publish("rfq.maker", frame, false)
          res.cork(() => res.end("{}"))
        })
      })
      .ws("/ws", {
        compression: uWS.DISABLED,
        maxBackpressure: 64 * 1024 * 1024,
        idleTimeout: 0,
        open: (ws) => {
          ws.subscribe("rfq.maker")
        }
      })
    const port = await new Promise<number>((resolve, reject) =>
      app.listen("127.0.0.1", 0, (socket) =>
        socket === false
          ? reject(new Error("cannot listen"))
          : resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket))
      )
    )
    await tell({ type: "ready", port })
  },
  { serve: true }
)

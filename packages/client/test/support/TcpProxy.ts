import * as net from "node:net"

/**
 * A TCP proxy in front of a host, so a test can do to a client's connections what a network does:
 * cut them all (`cut`), refuse new ones for a while (`refuse`), or send them to a restarted host
 * on another port (`retarget`).
 */
export interface TcpProxy {
  readonly url: string
  readonly cut: () => void
  readonly refuse: (refusing: boolean) => void
  readonly retarget: (port: number) => void
  /** Connections accepted since the start. */
  readonly accepted: () => number
  readonly close: () => Promise<void>
}

export const startTcpProxy = async (targetPort: number): Promise<TcpProxy> => {
  let target = targetPort
  let refusing = false
  let accepted = 0
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    if (refusing) return void client.destroy()
    accepted++
    const upstream = net.connect(target, "127.0.0.1")
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => {})
    }
    client.pipe(upstream).pipe(client)
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as net.AddressInfo
  const cut = () => {
    for (const socket of sockets) socket.destroy()
  }
  return {
    url: `http://127.0.0.1:${port}`,
    cut,
    refuse: (value) => (refusing = value),
    retarget: (port) => (target = port),
    accepted: () => accepted,
    close: () => {
      cut()
      return new Promise((resolve) => server.close(() => resolve()))
    }
  }
}

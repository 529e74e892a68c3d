/**
 * The part of the WebSocket API the session uses, which both the browser's `WebSocket` and the
 * `ws` package's class provide: property handlers, `send` of text, `close` with a code.
 */
export interface WebSocketInstance {
  readonly readyState: number
  // The events are typed loosely (each implementation has its own event classes); the session
  // reads `data` of a message and `code` and `reason` of a close, which both provide.
  onopen: ((event: any) => void) | null
  onmessage: ((event: any) => void) | null
  onclose: ((event: any) => void) | null
  onerror: ((event: any) => void) | null
  send(data: string): void
  close(code?: number, reason?: string): void
}

export type WebSocketLike = new (url: string) => WebSocketInstance

/** `WebSocket.OPEN` in both implementations. */
export const OPEN = 1

/** A frame's text: ws hands text frames over as strings, binary ones as bytes. */
export const frameText = (data: unknown): string | undefined => {
  if (typeof data === "string") return data
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data)
  if (ArrayBuffer.isView(data)) return new TextDecoder().decode(data)
  if (Array.isArray(data) && data.every((part) => ArrayBuffer.isView(part))) {
    return data.map((part: ArrayBufferView) => new TextDecoder().decode(part)).join("")
  }
  return undefined
}

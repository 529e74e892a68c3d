/** Display only: values are shown as the service sent them, never computed with here. */
export const time = (ms: number | undefined): string =>
  ms === undefined ? "" : new Date(ms).toLocaleTimeString(undefined, { hour12: false })

export const dateTime = (ms: number | undefined): string =>
  ms === undefined ? "" : new Date(ms).toLocaleString(undefined, { hour12: false })

export const num = (n: number | undefined): string =>
  n === undefined ? "" : n.toLocaleString("en-US", { maximumFractionDigits: 8 })

/** The maker's side as a trader reads it. */
export const side = (direction: string): string => (direction === "sell" ? "ask" : "bid")

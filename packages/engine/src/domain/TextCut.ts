/**
 * Client or stored text shown shortened in a message. The one home of the rule for every
 * shortened echo: cut at `max` UTF-16 units, but never after the first half of a surrogate pair
 * (a lone surrogate prints as a broken character, and as `\ud800` inside JSON).
 */

/** The first `max` UTF-16 units of `text`, one fewer when the last would be a pair's first half. */
export const safePrefix = (text: string, max: number): string => {
  if (text.length <= max) return text
  const last = text.charCodeAt(max - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max)
}

/** `text` as it is when it fits in `max` units, else its safe prefix followed by `…`. */
export const cutText = (text: string, max: number): string =>
  text.length <= max ? text : `${safePrefix(text, max)}…`

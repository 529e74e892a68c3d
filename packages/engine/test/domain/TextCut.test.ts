import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { cutText, safePrefix } from "../../src/domain/TextCut.js"

/** Whether `text` holds a surrogate that is not half of a well-formed pair. */
const hasLoneSurrogate = (text: string) =>
  /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)

describe("cutText", () => {
  it("keeps text that fits, and marks a cut with …", () => {
    expect(cutText("abc", 3)).toBe("abc")
    expect(cutText("abcd", 3)).toBe("abc…")
    expect(cutText("", 0)).toBe("")
  })

  it("never ends a cut on the first half of a surrogate pair", () => {
    // "𐀀" is two UTF-16 units; a cut at 3 would keep its first half.
    expect(safePrefix("a𐀀b", 2)).toBe("a")
    expect(cutText("a𐀀b", 2)).toBe("a…")
    expect(cutText("ab𐀀", 3)).toBe("ab…")
    expect(cutText("𐀀𐀀𐀀", 4)).toBe("𐀀𐀀…")
  })

  it("whatever the text, a cut of well-formed text is well-formed and a prefix of it", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-composite", maxLength: 60 }), fc.nat(80), (text, max) => {
        const prefix = safePrefix(text, max)
        expect(text.startsWith(prefix)).toBe(true)
        expect(prefix.length).toBeLessThanOrEqual(max)
        expect(prefix.length).toBeGreaterThanOrEqual(Math.min(text.length, max) - 1)
        expect(hasLoneSurrogate(cutText(text, max))).toBe(false)
      }),
      { numRuns: 2_000 }
    )
  })
})

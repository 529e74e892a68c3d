import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Either } from "effect"
import * as fc from "fast-check"
import { type Expiry, type Instrument, parseInstrument } from "../../src/domain/Instrument.js"
import { type Direction, oppositeDirection } from "../../src/domain/Primitives.js"
import {
  classifyStrategy,
  describeStructure,
  rfqKind,
  type StrategyHedge,
  type StrategyLeg,
  type StrategyName,
  strategyNames
} from "../../src/domain/Strategy.js"
import { arbBase, arbExpiry, arbInstrument, arbStrike } from "./instrumentArbitraries.js"

const RUNS = 1_000
const MAX_RANDOM_LEGS = 6
/** Ratios up to 100.00, in hundredths. */
const MAX_RATIO_HUNDREDTHS = 10_000n

interface Structure {
  readonly legs: ReadonlyArray<StrategyLeg>
  readonly hedge?: StrategyHedge
}
interface Template extends Structure {
  readonly expected: StrategyName
}

const arbDirection = fc.constantFrom<Direction>("buy", "sell")
const arbRatio = fc
  .bigInt({ min: 1n, max: MAX_RATIO_HUNDREDTHS })
  .map((h) => BigDecimal.normalize(BigDecimal.make(h, 2)))
const twice = (r: BigDecimal.BigDecimal) => BigDecimal.multiply(r, BigDecimal.fromBigInt(2n))
const arbStrikes = (n: number) =>
  fc
    .uniqueArray(arbStrike, { minLength: n, maxLength: n, comparator: (a, b) => BigDecimal.equals(a, b) })
    .map((ks) => [...ks].sort(BigDecimal.Order))
const arbTwoExpiries = fc
  .uniqueArray(arbExpiry, {
    minLength: 2,
    maxLength: 2,
    comparator: (a, b) => a.year === b.year && a.month === b.month && a.day === b.day
  })
  .map(([a, b]) => [a!, b!] as const)

const option = (
  base: "BTC" | "ETH",
  expiry: Expiry,
  strike: BigDecimal.BigDecimal,
  optionType: "call" | "put"
): Instrument => ({ kind: "option", base, expiry, strike, optionType })
const leg = (instrument: Instrument, direction: Direction, ratio: BigDecimal.BigDecimal): StrategyLeg => ({
  instrument,
  direction,
  ratio
})

const common = fc.record({
  base: arbBase,
  expiry: arbExpiry,
  d: arbDirection,
  r: arbRatio,
  type: fc.constantFrom("call" as const, "put" as const)
})
const T = (t: "call" | "put"): "Call" | "Put" => (t === "call" ? "Call" : "Put")

/** Structures built from each definition, with the name they must get. */
const arbTemplate: fc.Arbitrary<Template> = fc.oneof(
  common.map(({ base, expiry, d, r, type }) => ({
    legs: [leg(option(base, expiry, BigDecimal.fromBigInt(100n), type), d, r)],
    expected: T(type)
  })),
  fc.tuple(common, arbStrikes(2)).map(([{ base, expiry, d, r, type }, [k1, k2]]) => ({
    legs: [
      leg(option(base, expiry, k1!, type), d, r),
      leg(option(base, expiry, k2!, type), oppositeDirection(d), r)
    ],
    expected: `${T(type)} Spread` as const
  })),
  fc
    .tuple(common, arbStrikes(2), arbRatio)
    .filter(([{ r }, , r2]) => !BigDecimal.equals(r, r2))
    .map(([{ base, expiry, d, r, type }, [k1, k2], r2]) => ({
      legs: [
        leg(option(base, expiry, k1!, type), d, r),
        leg(option(base, expiry, k2!, type), oppositeDirection(d), r2)
      ],
      expected: `${T(type)} Ratio` as const
    })),
  common.chain(({ base, expiry, d, r }) =>
    arbStrike.map((k) => ({
      legs: [leg(option(base, expiry, k, "put"), d, r), leg(option(base, expiry, k, "call"), d, r)],
      expected: "Straddle" as const
    }))
  ),
  fc.tuple(common, arbStrikes(2), fc.boolean()).map(([{ base, expiry, d, r }, [k1, k2], guts]) => ({
    legs: [
      leg(option(base, expiry, guts ? k2! : k1!, "put"), d, r),
      leg(option(base, expiry, guts ? k1! : k2!, "call"), d, r)
    ],
    expected: guts ? ("Guts" as const) : ("Strangle" as const)
  })),
  fc
    .tuple(common, arbStrikes(2), fc.constantFrom("none", "put side", "call side"))
    .map(([{ base, expiry, d, r }, [k1, k2], hedgeSide]) => {
      const legs = [
        leg(option(base, expiry, k1!, "put"), d, r),
        leg(option(base, expiry, k2!, "call"), oppositeDirection(d), r)
      ]
      return hedgeSide === "none"
        ? { legs, expected: "Risk Reversal" as const }
        : {
            legs,
            hedge: { direction: hedgeSide === "put side" ? d : oppositeDirection(d) },
            expected: hedgeSide === "put side" ? ("Collar" as const) : ("Risk Reversal" as const)
          }
    }),
  common.chain(({ base, expiry, d, r }) =>
    arbStrike.map((k) => ({
      legs: [
        leg(option(base, expiry, k, "put"), d, r),
        leg(option(base, expiry, k, "call"), oppositeDirection(d), r)
      ],
      expected: "Synthetic" as const
    }))
  ),
  fc.tuple(common, arbStrikes(3)).map(([{ base, expiry, d, r, type }, [k1, k2, k3]]) => ({
    legs: [
      leg(option(base, expiry, k1!, type), d, r),
      leg(option(base, expiry, k2!, type), oppositeDirection(d), twice(r)),
      leg(option(base, expiry, k3!, type), d, r)
    ],
    expected: `${T(type)} Fly` as const
  })),
  fc.tuple(common, arbStrikes(4)).map(([{ base, expiry, d, r, type }, [k1, k2, k3, k4]]) => ({
    legs: [
      leg(option(base, expiry, k1!, type), d, r),
      leg(option(base, expiry, k2!, type), oppositeDirection(d), r),
      leg(option(base, expiry, k3!, type), oppositeDirection(d), r),
      leg(option(base, expiry, k4!, type), d, r)
    ],
    expected: `${T(type)} Condor` as const
  })),
  fc.tuple(common, arbStrikes(3)).map(([{ base, expiry, d, r }, [k1, k2, k3]]) => ({
    legs: [
      leg(option(base, expiry, k1!, "put"), d, r),
      leg(option(base, expiry, k2!, "put"), oppositeDirection(d), r),
      leg(option(base, expiry, k2!, "call"), oppositeDirection(d), r),
      leg(option(base, expiry, k3!, "call"), d, r)
    ],
    expected: "IFly" as const
  })),
  fc.tuple(common, arbStrikes(4)).map(([{ base, expiry, d, r }, [k1, k2, k3, k4]]) => ({
    legs: [
      leg(option(base, expiry, k1!, "put"), d, r),
      leg(option(base, expiry, k2!, "put"), oppositeDirection(d), r),
      leg(option(base, expiry, k3!, "call"), oppositeDirection(d), r),
      leg(option(base, expiry, k4!, "call"), d, r)
    ],
    expected: "Iron Condor" as const
  })),
  fc
    .tuple(common, arbTwoExpiries, arbStrikes(2), fc.boolean())
    .map(([{ base, d, r, type }, [e1, e2], [k1, k2], diagonal]) => ({
      legs: [
        leg(option(base, e1, k1!, type), d, r),
        leg(option(base, e2, diagonal ? k2! : k1!, type), oppositeDirection(d), r)
      ],
      expected: diagonal ? ("Diagonal" as const) : (`${T(type)} Calendar` as const)
    })),
  common.map(({ base, expiry, d, r }) => ({
    legs: [leg({ kind: "future", base, expiry }, d, r)],
    expected: "Future" as const
  })),
  common.map(({ base, d, r }) => ({
    legs: [leg({ kind: "perpetual", base }, d, r)],
    expected: "Perp" as const
  })),
  common.map(({ base, expiry, d, r }) => ({
    legs: [leg({ kind: "future_spread", base, near: expiry, far: "perpetual" }, d, r)],
    expected: "Fut Spd" as const
  })),
  fc.tuple(common, arbTwoExpiries, fc.boolean()).map(([{ base, d, r }, [e1, e2], perp]) => ({
    legs: [
      leg({ kind: "future", base, expiry: e1 }, d, r),
      leg(perp ? { kind: "perpetual", base } : { kind: "future", base, expiry: e2 }, oppositeDirection(d), r)
    ],
    expected: "Fut Spd" as const
  }))
)

const arbRandomStructure: fc.Arbitrary<Structure> = fc.record(
  {
    legs: fc.array(fc.record({ instrument: arbInstrument, direction: arbDirection, ratio: arbRatio }), {
      minLength: 1,
      maxLength: MAX_RANDOM_LEGS
    }),
    hedge: fc.record({ direction: arbDirection })
  },
  { requiredKeys: ["legs"] }
)
const arbStructure = fc.oneof(arbTemplate, arbRandomStructure)

const shuffled = <S extends Structure>(arb: fc.Arbitrary<S>) =>
  arb.chain((s) =>
    fc
      .shuffledSubarray([...s.legs], { minLength: s.legs.length, maxLength: s.legs.length })
      .map((legs) => [s, { ...s, legs }] as const)
  )
const flipped = (s: Structure): Structure => ({
  legs: s.legs.map((l) => ({ ...l, direction: oppositeDirection(l.direction) })),
  ...(s.hedge === undefined ? {} : { hedge: { direction: oppositeDirection(s.hedge.direction) } })
})

describe("classifyStrategy", () => {
  it("names every structure built from a definition after that definition", () => {
    fc.assert(
      fc.property(arbTemplate, (t) => classifyStrategy(t.legs, t.hedge) === t.expected),
      { numRuns: RUNS }
    )
  })

  it("does not depend on leg order", () => {
    fc.assert(
      fc.property(
        shuffled(arbStructure),
        ([s, t]) => classifyStrategy(s.legs, s.hedge) === classifyStrategy(t.legs, t.hedge)
      ),
      { numRuns: RUNS }
    )
  })

  it("keeps the name when every leg and the hedge change side", () => {
    fc.assert(
      fc.property(arbStructure, (s) => {
        const f = flipped(s)
        return classifyStrategy(s.legs, s.hedge) === classifyStrategy(f.legs, f.hedge)
      }),
      { numRuns: RUNS }
    )
  })

  it("does not depend on the size of the structure (all ratios scaled together)", () => {
    fc.assert(
      fc.property(arbTemplate, fc.integer({ min: 2, max: 50 }), (t, k) => {
        const legs = t.legs.map((l) => ({
          ...l,
          ratio: BigDecimal.multiply(l.ratio, BigDecimal.fromBigInt(BigInt(k)))
        }))
        return classifyStrategy(legs, t.hedge) === t.expected
      }),
      { numRuns: RUNS }
    )
  })

  it("always answers one of the documented names", () => {
    fc.assert(
      fc.property(arbRandomStructure, (s) =>
        (strategyNames as ReadonlyArray<string>).includes(classifyStrategy(s.legs, s.hedge))
      ),
      { numRuns: RUNS }
    )
  })

  it("is Custom for a spread whose legs do not balance, mixed bases, or options with futures", () => {
    const l = (name: string, direction: Direction, ratio = "1") =>
      leg(Either.getOrThrow(parseInstrument(name)), direction, BigDecimal.unsafeFromString(ratio))
    assert.strictEqual(
      classifyStrategy([l("BTC-27DEC30-90000-C", "buy"), l("BTC-27DEC30-110000-C", "buy")]),
      "Custom"
    )
    assert.strictEqual(
      classifyStrategy([l("BTC-27DEC30-90000-P", "buy"), l("BTC-27DEC30-110000-C", "buy", "2")]),
      "Custom"
    )
    assert.strictEqual(
      classifyStrategy([l("BTC-27DEC30-90000-C", "buy"), l("ETH-27DEC30-3000-C", "sell")]),
      "Custom"
    )
    assert.strictEqual(
      classifyStrategy([l("BTC-27DEC30-90000-C", "buy"), l("BTC-27DEC30", "sell")]),
      "Custom"
    )
    assert.strictEqual(classifyStrategy([l("BTC-27DEC30", "buy"), l("BTC-27DEC30", "sell")]), "Custom")
    assert.strictEqual(
      classifyStrategy([
        l("BTC-27DEC30-90000-C", "buy"),
        l("BTC-27DEC30-100000-C", "sell", "2"),
        l("BTC-27DEC30-110000-C", "sell")
      ]),
      "Custom"
    )
    assert.strictEqual(classifyStrategy([]), "Custom")
  })
})

describe("describeStructure", () => {
  const l = (name: string, direction: Direction = "buy", ratio = "1") =>
    leg(Either.getOrThrow(parseInstrument(name)), direction, BigDecimal.unsafeFromString(ratio))

  it("follows the documented format", () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<StrategyLeg>, string]> = [
      [[l("BTC-27DEC30-110000-C", "sell"), l("BTC-27DEC30-90000-C")], "BTC 27DEC30 90000/110000 Call Spread"],
      [[l("BTC-27DEC30-100000-C"), l("BTC-27DEC30-100000-P")], "BTC 27DEC30 100000 Straddle"],
      [[l("ETH-27DEC30-2512.5-P")], "ETH 27DEC30 2512.5 Put"],
      [
        [l("BTC-28MAR31-100000-C", "sell"), l("BTC-27DEC30-100000-C")],
        "BTC 27DEC30/28MAR31 100000 Call Calendar"
      ],
      [
        [l("BTC-28MAR31-90000-P", "sell"), l("BTC-27DEC30-110000-P")],
        "BTC 27DEC30/28MAR31 90000/110000 Diagonal"
      ],
      [
        [l("BTC-27DEC30-90000-C"), l("BTC-27DEC30-110000-C", "sell", "2")],
        "BTC 27DEC30 90000/110000 1x2 Call Ratio"
      ],
      [[l("BTC-27DEC30")], "BTC 27DEC30 Future"],
      [[l("BTC-PERPETUAL")], "BTC Perp"],
      [[l("BTC-FS-27DEC30_PERP")], "BTC 27DEC30/PERP Fut Spd"],
      [[l("BTC-PERPETUAL", "sell"), l("BTC-27DEC30")], "BTC 27DEC30/PERP Fut Spd"],
      [[l("BTC-27DEC30-90000-C"), l("BTC-27DEC30-95000-C"), l("BTC-28MAR31-95000-C")], "BTC Custom 3 legs"]
    ]
    for (const [legs, expected] of cases) assert.strictEqual(describeStructure(legs), expected)
  })

  it("does not depend on leg order", () => {
    fc.assert(
      fc.property(shuffled(arbStructure), ([s, t]) => {
        const name = classifyStrategy(s.legs, s.hedge)
        return describeStructure(s.legs, name) === describeStructure(t.legs, name)
      }),
      { numRuns: RUNS }
    )
  })
})

describe("rfqKind", () => {
  const l = (name: string) => ({ instrument: Either.getOrThrow(parseInstrument(name)) })
  it("is option or future, and refuses a mix or no legs", () => {
    assert.deepStrictEqual(
      rfqKind([l("BTC-27DEC30-90000-C"), l("BTC-27DEC30-90000-P")]),
      Either.right("option")
    )
    assert.deepStrictEqual(
      rfqKind([l("BTC-27DEC30"), l("BTC-PERPETUAL"), l("BTC-FS-27DEC30_PERP")]),
      Either.right("future")
    )
    const mixed = Either.flip(rfqKind([l("BTC-27DEC30-90000-C"), l("BTC-27DEC30")])).pipe(Either.getOrThrow)
    assert.strictEqual(mixed.message, "invalid request")
    assert.strictEqual(Either.flip(rfqKind([])).pipe(Either.getOrThrow).message, "invalid request")
  })
})

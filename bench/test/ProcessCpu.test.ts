import { describe, expect, it } from "vitest"
import { cpuPerOperation, cpuSpent, readCpu } from "../src/ProcessCpu.js"

const reading = (entries: Array<[pid: number, ms: number]>) => new Map(entries)

describe("CPU spent by a group of processes between two readings", () => {
  it("counts each process's growth; one that started meanwhile counts all it has", () => {
    expect(
      cpuSpent(
        reading([
          [1, 100],
          [2, 50]
        ]),
        reading([
          [1, 130],
          [2, 60],
          [3, 25]
        ])
      )
    ).toBe(30 + 10 + 25)
  })

  it("a process that ended meanwhile takes nothing away from the others' work", () => {
    // A backend of a closed pool with 5 s of CPU ended between the readings: summing the group
    // before and after would have said -4,960 ms (0 once clamped).
    expect(
      cpuSpent(
        reading([
          [1, 5_000],
          [2, 100]
        ]),
        reading([[2, 140]])
      )
    ).toBe(40)
  })

  it("a reused process id (less CPU than before) is a new process", () => {
    expect(cpuSpent(reading([[7, 900]]), reading([[7, 15]]))).toBe(15)
  })

  it("undefined when either reading is missing; per operation divides by the operations", () => {
    expect(cpuSpent(undefined, reading([[1, 1]]))).toBeUndefined()
    expect(
      cpuPerOperation({ a: reading([[1, 10]]), b: undefined }, { a: reading([[1, 30]]), b: undefined }, 4)
    ).toStrictEqual({ a: 5, b: undefined })
  })

  it("reads this process by id, and nothing for a process that does not exist", () => {
    const own = readCpu({ self: { pids: [process.pid] }, none: { pids: [2 ** 22 + 7] } })
    expect(own.self?.get(process.pid)).toBeGreaterThanOrEqual(0)
    expect(own.none).toBeUndefined()
  })
})

import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import {
  fillHaproxyConfig,
  HAPROXY_BIN,
  HAPROXY_TEMPLATE,
  haproxyInstalled,
  writeHaproxyConfig
} from "../src/Haproxy.js"

const template = fs.readFileSync(HAPROXY_TEMPLATE, "utf8")
const layout = {
  bind: "127.0.0.1:18080",
  servers: [
    { name: "host1", address: "127.0.0.1:9101" },
    { name: "host2", address: "127.0.0.1:9102" }
  ]
}

const serverLines = (config: string) => config.split("\n").filter((line) => /^\s*server\s/.test(line))
const bindLines = (config: string) => config.split("\n").filter((line) => /^\s*bind\s/.test(line))

describe("HAProxy configuration from deploy/haproxy.cfg", () => {
  it("sets the bind address and one checked server line per host, keeping the rest", () => {
    const filled = fillHaproxyConfig(template, layout)
    expect(bindLines(filled).map((line) => line.trim())).toEqual(["bind 127.0.0.1:18080"])
    expect(serverLines(filled).map((line) => line.trim())).toEqual([
      "server host1 127.0.0.1:9101 check",
      "server host2 127.0.0.1:9102 check"
    ])
    const untouched = (config: string) =>
      config.split("\n").filter((line) => !/^\s*(server|bind)\s/.test(line))
    expect(untouched(filled)).toEqual(untouched(template))
    // Filled again (a template already filled once) gives the same result.
    expect(fillHaproxyConfig(filled, layout)).toBe(filled)
  })

  it("refuses a template without its landmarks, and an empty server list", () => {
    expect(() => fillHaproxyConfig(template.replace(/^\s*# servers: begin$/m, ""), layout)).toThrow(
      /servers: begin/
    )
    expect(() => fillHaproxyConfig(`${template}\n    bind :9999\n`, layout)).toThrow(/one bind line/)
    expect(() => fillHaproxyConfig(template, { ...layout, servers: [] })).toThrow(/at least one server/)
  })

  it.skipIf(!haproxyInstalled())(
    "the template and the filled file are valid for HAProxy (haproxy -c)",
    () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rfq-haproxy-"))
      try {
        const file = writeHaproxyConfig(path.join(dir, "nested", "haproxy.cfg"), layout)
        for (const config of [HAPROXY_TEMPLATE, file]) {
          expect(execFileSync(HAPROXY_BIN, ["-c", "-f", config], { encoding: "utf8" })).toContain(
            "Configuration file is valid"
          )
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  )
})

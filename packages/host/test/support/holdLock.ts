// Test fixture: takes the data-directory lock given as argv[2] in a separate process, reports
// "locked <pid>" or "refused <message>" on stdout, then holds the lock until killed.
import { acquireSync, DataDirLocked } from "../../src/DataDirLock.js"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: holdLock.ts <dir>")
const result = acquireSync(dir)
if (result instanceof DataDirLocked) {
  process.stdout.write(`refused ${result.message}\n`)
  process.exit(3)
}
process.stdout.write(`locked ${process.pid}\n`)
setInterval(() => {}, 1 << 30)

import { parseAdmin } from "./admin/AdminParse.js"

/**
 * `npm run admin -- <command>`: provisioning (the commands and their help: `admin/AdminCommands.ts`,
 * what they do: `admin/AdminExecute.ts`). Help and wrong arguments are answered before anything is
 * opened. Then, with the host's environment:
 * - embedded database, no host running: the data directory is locked and opened here;
 * - embedded database held by a running host: the command goes to the host over its admin socket
 *   (`admin/AdminSocketServer.ts`) and takes effect there at once;
 * - PostgreSQL: opened here (several processes may); running hosts see the change within their
 *   caches' 5 s (open sessions within their 1 s recheck), or at once when told over Redis
 *   (several hosts, `shared/AdminNotice.ts`).
 */

// Help and wrong arguments are answered from the command table alone (no engine, no host loaded:
// a tenth of a second rather than seconds); a command imports what runs it (`admin/AdminRun.ts`).
const args = process.argv.slice(2)
const parsed = parseAdmin(args)
if (parsed._tag === "Help") process.stdout.write(`${parsed.text}\n`)
else if (parsed._tag === "Wrong") {
  process.stderr.write(`${parsed.message}\n`)
  process.exitCode = 1
} else {
  const { runAdminCommand } = await import("./admin/AdminRun.js")
  runAdminCommand(args, parsed.command)
}

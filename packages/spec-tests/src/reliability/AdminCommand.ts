import { spawn } from "node:child_process"
import * as path from "node:path"
import { REPO_ROOT } from "./HostProcess.js"

const ADMIN = path.join(REPO_ROOT, "packages/host/src/admin.ts")

/** Runs `npm run admin -- <args>` against the host's database (its environment): exit code and output. */
export const runAdmin = (env: Record<string, string>, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const base: NodeJS.ProcessEnv = { ...process.env }
    for (const name of ["ENCRYPTION_KEYS", "DATA_DIR", "LOG_LEVEL", "PORT"]) delete base[name]
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", ADMIN, ...args], {
      cwd: REPO_ROOT,
      env: { ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c))
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

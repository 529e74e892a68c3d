// The PGlite worker's entry when the engine runs from its TypeScript sources (tests, `npm start`):
// the worker thread gets tsx's loader, then the entry itself (`PgliteWorkerMain.ts`). Built code
// starts `PgliteWorkerMain.js` directly and never loads this file.
import { register } from "tsx/esm/api"

register()
await import("./PgliteWorkerMain.ts")

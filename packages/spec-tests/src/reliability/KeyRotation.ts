/**
 * Key rotation for exchange credentials at rest now lives in the engine (the host's admin command
 * `credentials rotate-key` runs it); item 8 checks that code, re-exported here under its old path.
 */
export { credentialsAad, RotationRefused, type RotationResult, rotateCredentialsKey } from "@rfq/engine"

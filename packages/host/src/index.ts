export { version } from "@rfq/engine"

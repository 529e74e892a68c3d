import * as fs from "node:fs"
import * as path from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SpawnedHost, spawnHost } from "../../host/test/support/spawnHost.js"
import { CONSOLE_DIR, ensureConsoleBuilt } from "../scripts/ensureBuilt.js"

/**
 * The console in real Chromium (Debian's, driven by playwright-core) against a real host: a taker
 * and a maker, each in a browser context of its own, complete a trade split 50/50 between
 * `dbt-flaky` (every execution fails) and `dbt-main`, and the taker sees `filledPartial` with both
 * allocations. Everything goes through the screens; every wait is for an element, never a sleep.
 * Screenshots of each main screen go to packages/console/test-results/ (git-ignored).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const SHOTS = path.join(CONSOLE_DIR, "test-results")

let host: SpawnedHost
let browser: Browser
const contexts: Array<BrowserContext> = []

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; .ci/run does)`
    )
  }
  fs.mkdirSync(SHOTS, { recursive: true })
  const [started] = await Promise.all([spawnHost({ startTimeoutMs: 120_000 }), ensureConsoleBuilt()])
  host = started
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
  })
}, 240_000)

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined)
  await browser?.close()
  await host?.stop()
  if (host?.dataDir !== undefined) fs.rmSync(host.dataDir, { recursive: true, force: true })
})

/** A fresh browser context (no shared storage) on the console's sign-in page. */
const openConsole = async (): Promise<Page> => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
  contexts.push(context)
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(`${host.url}/console`)
  return page
}

const signIn = async (page: Page, clientId: string, secret: string) => {
  await page.getByLabel("Client id").fill(clientId)
  await page.getByLabel("Client secret").fill(secret)
  await page.getByRole("button", { name: "Sign in" }).click()
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true })

describe("the console in Chromium", () => {
  it("signs in, a taker and a maker trade a split RFQ, the taker sees filledPartial with both allocations", async () => {
    const taker = await openConsole()
    const maker = await openConsole()

    // A wrong secret: the service's status and message, verbatim.
    await signIn(taker, "demo-taker", "not-the-secret")
    await expect.poll(() => taker.getByRole("alert").textContent()).toContain("401 invalid client ID")
    await shot(taker, "sign-in")
    await signIn(taker, "demo-taker", "demo-taker-secret")
    await signIn(maker, "demo-maker-1", "demo-maker-1-secret")
    for (const page of [taker, maker])
      await page.getByTestId("live-status").getByText("live", { exact: true }).waitFor()
    // Tokens stay in memory: nothing in the browser's storage.
    expect(await taker.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual(
      [0, 0, ""]
    )
    await maker.getByRole("button", { name: "Maker: quote" }).click()

    // Taker: a BTC call spread from the venue's listing, 100 BTC.
    await taker.getByLabel("amount", { exact: true }).fill("100")
    const listed = await taker
      .locator("#leg-instruments option")
      .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))
    const calls = listed.filter((name) => name.endsWith("-C"))
    const expiry = calls[0]!.split("-")[1]!
    const [low, high] = calls.filter((name) => name.split("-")[1] === expiry)
    expect(high).toBeDefined()
    await taker.getByLabel("leg 1 instrument").fill(low!)
    await taker.getByRole("button", { name: "Add leg" }).click()
    await taker.getByLabel("leg 2 side").selectOption("sell")
    await taker.getByLabel("leg 2 instrument").fill(high!)
    await taker.getByTestId("strategy").getByText("Call Spread").waitFor()

    // Settlement on DBT, split 50/50 between dbt-flaky and dbt-main; the split is checked as typed.
    const accountOption = async (alias: string) =>
      (await taker
        .getByLabel("DBT account 1", { exact: true })
        .locator("option", { hasText: alias })
        .getAttribute("value"))!
    await taker.getByLabel("DBT account 1", { exact: true }).selectOption(await accountOption("dbt-flaky"))
    await taker.getByLabel("DBT account 1 percentage").fill("60")
    await taker.getByRole("button", { name: "Add account" }).click()
    await taker.getByLabel("DBT account 2", { exact: true }).selectOption(await accountOption("dbt-main"))
    await taker.getByLabel("DBT account 2 percentage").fill("50")
    await expect.poll(() => taker.getByLabel("DBT split problems").textContent()).toMatch(/100/)
    await taker.getByLabel("DBT account 1 percentage").fill("50")
    await taker.getByText("Split OK: percentages total 100.").waitFor()
    await taker.getByLabel("DBT maker maker-1").check()
    await shot(taker, "taker-new-rfq")
    await taker.getByRole("button", { name: "Send RFQ" }).click()
    const takerRfq = taker.locator(".taker-rfq")
    await takerRfq.getByTestId("rfq-status").getByText("open").waitFor()
    const rfqId = Number(await takerRfq.getAttribute("data-rfq"))
    expect(rfqId).toBeGreaterThan(0)

    // Maker: the RFQ arrives live; price the legs from the mark and send an ask.
    await maker.locator(`.incoming tr[data-rfq="${rfqId}"]`).click()
    await maker.getByRole("button", { name: "Use mark" }).click()
    await maker.getByRole("button", { name: "Price legs" }).click()
    await maker.getByTestId("price-difference").waitFor()
    await maker.getByRole("button", { name: "Send quote" }).click()
    const quoteRow = maker.locator(".my-quotes tr[data-quote]").first()
    await quoteRow.getByText("active").waitFor()
    // Update it: a label, the same prices.
    await quoteRow.getByRole("button", { name: "edit" }).click()
    await maker.getByLabel("quote label").fill("ask-1")
    await maker.getByRole("button", { name: "Update quote" }).click()
    await maker.locator(".my-quotes").getByText("(ask-1)").waitFor()
    await shot(maker, "maker-quote")

    // Taker: the ask arrives live in the book; buy it.
    const ask = takerRfq.locator(".asks tr[data-quote]").first()
    await ask.waitFor()
    await shot(taker, "taker-quote-book")
    await ask.getByRole("button", { name: "Buy" }).click()
    await takerRfq.getByTestId("trade-status").getByText("filledPartial", { exact: true }).waitFor()
    const allocations = takerRfq.locator(".allocations tbody tr")
    await expect.poll(() => allocations.count()).toBe(2)
    const rows = await allocations.evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent))
    )
    expect(rows).toEqual([
      [
        "dbt-flaky",
        "DBT",
        "50 %",
        "50",
        "failed",
        "the venue rejected the block trade (demo account dbt-flaky)"
      ],
      ["dbt-main", "DBT", "50 %", "50", "filled", expect.stringMatching(/^DBT-BT-\d+$/)]
    ])
    await expect.poll(() => takerRfq.locator(".trade p").textContent()).toContain("filled 50 of 100")
    await shot(taker, "taker-trade")

    // Maker: its quote is filled, live.
    await maker.locator(".my-quotes").getByText("filled", { exact: true }).waitFor()
    await shot(maker, "maker-after-trade")

    // Both: the lists with a status filter.
    await taker.getByRole("button", { name: "RFQs and quotes" }).click()
    await taker.getByLabel("traded", { exact: true }).check()
    await taker.locator(`tr[data-rfq="${rfqId}"]`).getByText("filledPartial").waitFor()
    await shot(taker, "lists")
  })
})

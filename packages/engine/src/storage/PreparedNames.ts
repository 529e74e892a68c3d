/**
 * Names for the statements the service sends over and over (a quote step, an accept, the ledger's
 * booking), so that each pooled connection has PostgreSQL parse and analyse a statement's text once
 * and later only binds and executes it: node-postgres prepares a named statement the first time a
 * connection runs it and skips the parse afterwards. An unnamed statement is parsed, analysed and
 * planned again on every execution, work the database server repeats for every step.
 *
 * A text gets a name the second time it is seen, so one-off texts (a list with unusual filters)
 * never become prepared statements; at most `capacity` texts are named per process, and beyond
 * that a new text stays unnamed, so the server's prepared statements per connection stay bounded.
 * Statements without parameters are never named: they go through the simple query protocol,
 * which also runs scripts of several statements (migrations).
 */
export class PreparedNames {
  private readonly names = new Map<string, string>()
  private readonly seenOnce = new Set<string>()

  constructor(private readonly capacity = 100) {}

  /** The name to send `text` under, or undefined to send it unnamed. */
  nameOf(text: string): string | undefined {
    const name = this.names.get(text)
    if (name !== undefined || this.names.size >= this.capacity) return name
    if (!this.seenOnce.has(text)) {
      // Texts seen once are only candidates: forgotten wholesale rather than kept for ever.
      if (this.seenOnce.size >= this.capacity * 4) this.seenOnce.clear()
      this.seenOnce.add(text)
      return undefined
    }
    this.seenOnce.delete(text)
    const fresh = `rfq_s${this.names.size + 1}`
    this.names.set(text, fresh)
    return fresh
  }

  /** How many texts are named (for tests). */
  get size(): number {
    return this.names.size
  }
}

import type { EndpointOutput } from "@rfq/engine/api"
import { IssueList, ShortInput } from "../ui/Fields.js"
import { draftRows, RemoveRow } from "./DraftRows.js"
import { type AccountDraft, newKey, type SettlementOption, splitIssues } from "./RfqDraft.js"

export type Credentials = EndpointOutput<"v1/account/exchange-credentials">[number]
export type Maker = EndpointOutput<"v1/exchange/maker">[number]

interface Props {
  readonly option: SettlementOption
  readonly accounts: ReadonlyArray<AccountDraft>
  readonly onAccounts: (accounts: ReadonlyArray<AccountDraft>) => void
  readonly credentials: ReadonlyArray<Credentials>
  readonly makers: ReadonlyArray<Maker>
  readonly invited: ReadonlyArray<string>
  readonly onInvited: (makerIds: ReadonlyArray<string>) => void
}

/**
 * One settlement option: the desk's accounts on that venue with their split percentages (rules 1–3
 * checked as the user types, in the service's words) and the makers invited on it.
 */
export const SettlementEditor = (props: Props) => {
  const { option, accounts, onAccounts } = props
  const venueCredentials = props.credentials.filter((c) => c.exchangeShortCode === option)
  const issues = splitIssues(accounts)
  const rows = draftRows(accounts, onAccounts)
  const offering = props.makers.filter((m) => m.settlementOptions.includes(option))
  const toggle = (makerId: string, on: boolean) =>
    props.onInvited(on ? [...props.invited, makerId] : props.invited.filter((id) => id !== makerId))
  return (
    <fieldset class="settlement" data-option={option}>
      <legend>Settle on {option}</legend>
      <div class="columns">
        <div>
          <h4>Accounts and split</h4>
          <table>
            <tbody>
              {accounts.map((account, i) => (
                <tr key={account.key}>
                  <td>
                    <select
                      aria-label={`${option} account ${i + 1}`}
                      value={account.credentialsId}
                      onChange={(e) => rows.update(account.key, { credentialsId: e.currentTarget.value })}
                    >
                      <option value="">choose an account</option>
                      {venueCredentials.map((c) => (
                        <option key={c.credentialsId} value={String(c.credentialsId)}>
                          {c.alias} (#{c.credentialsId})
                        </option>
                      ))}
                    </select>
                  </td>
                  <td class="nowrap">
                    <ShortInput
                      name={`${option} account ${i + 1} percentage`}
                      inputMode="decimal"
                      value={account.percentage}
                      onInput={(percentage) => rows.update(account.key, { percentage })}
                    />
                    %
                  </td>
                  <td>
                    <RemoveRow count={accounts.length} onRemove={() => rows.remove(account.key)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <button
            type="button"
            onClick={() => rows.add({ key: newKey(), credentialsId: "", percentage: "" })}
          >
            Add account
          </button>
          {issues.length === 0 ? (
            <p class="ok split-check">Split OK: percentages total 100.</p>
          ) : (
            <IssueList class="split-check" name={`${option} split problems`} issues={issues} />
          )}
        </div>
        <div>
          <h4>Makers</h4>
          {offering.length === 0 && <p class="hint">No maker settles on {option}.</p>}
          {offering.map((m) => (
            <label key={m.makerId} class="block">
              <input
                type="checkbox"
                aria-label={`${option} maker ${m.makerId}`}
                checked={props.invited.includes(m.makerId)}
                onChange={(e) => toggle(m.makerId, e.currentTarget.checked)}
              />{" "}
              {m.name} <span class="hint">({m.makerId})</span>
            </label>
          ))}
        </div>
      </div>
    </fieldset>
  )
}

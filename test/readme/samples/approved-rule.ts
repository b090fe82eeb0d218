// docs/concepts.md "Only an affirmative confirm approves", as written. Only
// the export at the end is added.

// --- sample ---
import { isApproved } from '@pushary/mastra'

const verdicts = [
  isApproved({ status: 'answered', type: 'confirm', value: ' Yes ' }), // true: trimmed, lower-cased
  isApproved({ status: 'answered', value: 'ok' }), // true: no type reads as confirm
  isApproved({ status: 'answered', type: 'confirm', value: 'allow' }), // false: not an affirmative word
  isApproved({ status: 'answered', type: 'select', value: 'yes' }), // false: an option is data
  isApproved({ status: 'expired', type: 'confirm', value: null }), // false: nobody approved
]
// --- end of sample ---

export { verdicts }

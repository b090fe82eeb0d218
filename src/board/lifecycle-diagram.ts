/**
 * The review lifecycle drawn as inline SVG on the server, with one review's
 * current state and the transitions it took highlighted. The graph is read
 * from the Mermaid text `machines/mermaid.ts` renders from the machine
 * itself (the same text docs/review-lifecycle.md is checked against), so the
 * board can never draw a transition the machine does not have. No script and
 * no network: the page's CSP allows neither.
 */
import { reviewLifecycleMermaid } from '../machines/mermaid.js'
import type { ReviewState } from '../machines/review-lifecycle.js'
import { html, type SafeHtml } from '../server/reviewer/html.js'
import type { ReviewTransition } from '../store/review-schema.js'

interface Edge {
  readonly from: string
  readonly to: string
  readonly events: string[]
}

/** The lifecycle graph: states in the machine's order, the initial one, and edges by state pair. */
export interface LifecycleGraph {
  readonly initial: string
  readonly states: readonly { readonly key: string; readonly final: boolean }[]
  readonly edges: readonly Edge[]
}

/**
 * Reads the graph out of the Mermaid text: `[*] --> a`, `a : text`,
 * `a --> b : EVENT`, `a --> [*]`.
 *
 * @example
 * lifecycleGraph().initial // 'pending'
 */
export function lifecycleGraph(mermaid: string = reviewLifecycleMermaid()): LifecycleGraph {
  let initial = ''
  const order: string[] = []
  const finals = new Set<string>()
  const edges = new Map<string, Edge>()
  const see = (key: string) => {
    if (!order.includes(key)) order.push(key)
  }
  for (const raw of mermaid.split('\n').slice(1)) {
    const line = raw.trim()
    const arrow = /^(\S+) --> (\S+)(?: : (.+))?$/.exec(line)
    if (arrow) {
      const [, from = '', to = '', event] = arrow
      if (from === '[*]') {
        initial = to
        see(to)
      } else if (to === '[*]') finals.add(from)
      else {
        see(from)
        see(to)
        const key = `${from}>${to}`
        const edge = edges.get(key) ?? { from, to, events: [] }
        if (event !== undefined) edge.events.push(event)
        edges.set(key, edge)
      }
      continue
    }
    const described = /^(\S+) : /.exec(line)
    if (described?.[1]) see(described[1])
  }
  return {
    initial,
    states: order.map((key) => ({ key, final: finals.has(key) })),
    edges: [...edges.values()],
  }
}

const BOX_W = 132
const BOX_H = 40
const COL_W = 250
const ROW_H = 100
const PAD = 24
/** Room above and below the boxes for the arcs of edges that skip a column. */
const ARC_ROOM = 70

interface Point {
  readonly x: number
  readonly y: number
}

/** Columns by distance from the initial state; rows in the machine's order. */
function layout(graph: LifecycleGraph): Map<string, Point> {
  const depth = new Map<string, number>([[graph.initial, 0]])
  const queue = [graph.initial]
  while (queue.length > 0) {
    const at = queue.shift() as string
    for (const edge of graph.edges) {
      if (edge.from === at && !depth.has(edge.to)) {
        depth.set(edge.to, (depth.get(at) ?? 0) + 1)
        queue.push(edge.to)
      }
    }
  }
  const columns = new Map<number, string[]>()
  for (const { key } of graph.states) {
    const column = depth.get(key) ?? 0
    columns.set(column, [...(columns.get(column) ?? []), key])
  }
  // The state joined to most others of its column goes in the middle, so those edges stay short.
  for (const [column, keys] of columns) {
    const inColumn = (key: string) =>
      graph.edges.filter(
        (e) => (e.from === key && keys.includes(e.to)) || (e.to === key && keys.includes(e.from)),
      ).length
    const hub = [...keys].sort((a, b) => inColumn(b) - inColumn(a))[0] as string
    const rest = keys.filter((key) => key !== hub)
    columns.set(column, [
      ...rest.slice(0, Math.floor(rest.length / 2)),
      hub,
      ...rest.slice(Math.floor(rest.length / 2)),
    ])
  }
  const rows = Math.max(...[...columns.values()].map((keys) => keys.length))
  const points = new Map<string, Point>()
  for (const [column, keys] of columns) {
    const offset = ((rows - keys.length) * ROW_H) / 2
    keys.forEach((key, row) => {
      points.set(key, { x: PAD + 60 + column * COL_W, y: PAD + ARC_ROOM + offset + row * ROW_H })
    })
  }
  return points
}

/** Where the segment from the centre of `a` towards `b` leaves a's box. */
function boxExit(a: Point, b: Point): Point {
  const cx = a.x + BOX_W / 2
  const cy = a.y + BOX_H / 2
  const dx = b.x + BOX_W / 2 - cx
  const dy = b.y + BOX_H / 2 - cy
  const scale = Math.min(
    dx === 0 ? Number.POSITIVE_INFINITY : BOX_W / 2 / Math.abs(dx),
    dy === 0 ? Number.POSITIVE_INFINITY : BOX_H / 2 / Math.abs(dy),
  )
  return { x: cx + dx * scale, y: cy + dy * scale }
}

function round(value: number): number {
  return Math.round(value * 10) / 10
}

function edgePath(
  edge: Edge,
  points: Map<string, Point>,
  bent: boolean,
  centreY: number,
): { d: string; label: Point } {
  const a = points.get(edge.from) as Point
  const b = points.get(edge.to) as Point
  if (edge.from === edge.to) {
    const x = a.x + BOX_W / 2
    const d = `M ${x - 18} ${a.y} C ${x - 34} ${a.y - 40}, ${x + 34} ${a.y - 40}, ${x + 18} ${a.y}`
    return { d, label: { x, y: a.y - 34 } }
  }
  const start = boxExit(a, b)
  const end = boxExit(b, a)
  const mx = (start.x + end.x) / 2
  const my = (start.y + end.y) / 2
  const length = Math.hypot(end.x - start.x, end.y - start.y) || 1
  let cx = mx
  let cy = my
  if (Math.abs(b.x - a.x) > COL_W) {
    // An edge that skips a column arcs around the boxes between, away from the middle.
    cy = my + (my > centreY + 1 ? 1 : -1) * (Math.abs(my - centreY) + ARC_ROOM * 1.6)
  } else if (bent) {
    // Two states joined both ways, or in one column: a curve, so neither arrow hides the other.
    cx = mx + (-(end.y - start.y) / length) * 30
    cy = my + ((end.x - start.x) / length) * 30
  }
  const d = `M ${round(start.x)} ${round(start.y)} Q ${round(cx)} ${round(cy)} ${round(end.x)} ${round(end.y)}`
  return { d, label: { x: (mx + cx) / 2, y: (my + cy) / 2 } }
}

/**
 * The lifecycle as an SVG figure: `current` filled, states the review passed
 * through outlined, the transitions its history took drawn bold. Every state
 * and edge carries `data-state` / `data-edge` and the text says which is
 * current, so the highlight does not rely on colour alone.
 *
 * @example
 * renderLifecycleDiagram({ current: 'uncertain', history }).value.startsWith('<figure') // true
 */
export function renderLifecycleDiagram(options: {
  readonly current: ReviewState
  readonly history: readonly ReviewTransition[]
}): SafeHtml {
  const graph = lifecycleGraph()
  const points = layout(graph)
  const visited = new Set<string>(options.history.map((entry) => entry.to))
  const taken = new Set(
    options.history.filter((entry) => entry.from !== null).map((entry) => `${entry.from}>${entry.to}`),
  )
  const takenEvents = new Set(
    options.history
      .filter((entry) => entry.from !== null)
      .map((entry) => `${entry.from}>${entry.to}>${entry.event}`),
  )
  const keys = new Set(graph.edges.map((edge) => `${edge.from}>${edge.to}`))
  const width = PAD * 2 + 60 + Math.max(...[...points.values()].map((p) => p.x)) + BOX_W - PAD
  const height = Math.max(...[...points.values()].map((p) => p.y)) + BOX_H + ARC_ROOM + PAD
  const start = points.get(graph.initial) as Point
  const centreY = start.y + BOX_H / 2
  const edges = graph.edges.map((edge) => {
    const a = points.get(edge.from) as Point
    const b = points.get(edge.to) as Point
    const bent = keys.has(`${edge.to}>${edge.from}`) || a.x === b.x
    const { d, label } = edgePath(edge, points, bent, centreY)
    const isTaken = taken.has(`${edge.from}>${edge.to}`)
    const shown = edge.events.filter((event) => takenEvents.has(`${edge.from}>${edge.to}>${event}`))
    const lines = shown.map(
      (event, index) =>
        html`<tspan x="${round(label.x)}" dy="${index === 0 ? -((shown.length - 1) * 11) / 2 : 11}">${event}</tspan>`,
    )
    return html`<g class="edge${isTaken ? ' taken' : ''}" data-edge="${edge.from}>${edge.to}"><path d="${d}" marker-end="url(#arrow${isTaken ? '-taken' : ''})"/><text x="${round(label.x)}" y="${round(label.y)}">${lines}</text></g>`
  })
  const states = graph.states.map(({ key, final }) => {
    const p = points.get(key) as Point
    const isCurrent = key === options.current
    const classes = [
      'state',
      isCurrent ? 'current' : '',
      visited.has(key) ? 'visited' : '',
      final ? 'final' : '',
    ]
      .filter(Boolean)
      .join(' ')
    return html`<g class="${classes}" data-state="${key}"${isCurrent ? html` aria-current="true"` : ''}><rect x="${p.x}" y="${p.y}" width="${BOX_W}" height="${BOX_H}" rx="${final ? 4 : 12}"/>${final ? html`<rect class="inner" x="${p.x + 3}" y="${p.y + 3}" width="${BOX_W - 6}" height="${BOX_H - 6}" rx="2"/>` : ''}<text x="${p.x + BOX_W / 2}" y="${p.y + BOX_H / 2 + 5}">${isCurrent ? `▶ ${key}` : key}</text></g>`
  })
  const list = graph.edges.map((edge) => {
    const isTaken = taken.has(`${edge.from}>${edge.to}`)
    return html`<li${isTaken ? html` class="taken"` : ''}>${edge.from} → ${edge.to}: ${edge.events.join(', ')}${isTaken ? ' (taken)' : ''}</li>`
  })
  return html`<figure class="lifecycle"><svg viewBox="0 0 ${round(width)} ${round(height)}" width="${round(width)}" height="${round(height)}" role="img" aria-labelledby="lifecycle-title"><title id="lifecycle-title">Review lifecycle; this review is ${options.current}</title><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead"/></marker><marker id="arrow-taken" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead taken"/></marker></defs><circle class="initial" cx="${PAD + 8}" cy="${start.y + BOX_H / 2}" r="7"/><path class="edge-line" d="M ${PAD + 15} ${start.y + BOX_H / 2} L ${start.x} ${start.y + BOX_H / 2}" marker-end="url(#arrow)"/>${edges}${states}</svg><ul class="transitions" aria-label="Every transition of the lifecycle">${list}</ul><figcaption>Current state: <strong>${options.current}</strong>. Bold arrows are the transitions this review took; outlined states are those it passed through. Drawn from the lifecycle machine.</figcaption></figure>`
}

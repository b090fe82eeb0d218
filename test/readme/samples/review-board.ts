// docs/operations.md "Review board", as written. Added before the sample: the
// imports and what it names but leaves to the application (its review store,
// its Mastra instance, a Hono app, an Express app and a port); after it, the
// exports.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createPusharyReviewBoard, createSqliteReviewStore } from '@pushary/mastra'
import express from 'express'
import { Hono } from 'hono'

const store = createSqliteReviewStore({
  url: `file:${join(process.env.README_SAMPLES_DIR!, `board-${randomUUID()}-reviews.db`)}`,
})
const mastra = new Mastra({})
const hono = new Hono()
const app = express()
const port = 0 // e.g. 3001

// --- sample ---
const board = createPusharyReviewBoard({
  store, // the app's review store: the one its dispatcher uses
  operatorKey: process.env.PUSHARY_BOARD_KEY!, // 24+ characters, typed once into the sign-in form
  mastra, // sign-ins, refusals and every recovery are logged through Mastra's logger
})

// Hono (Mastra's server is Hono too), or any Fetch-API server:
hono.all('/pushary/board/*', (c) => board.fetch(c.req.raw))

// Or Express:
app.use('/pushary/board', board.express)

// Or plain node:http:
const server = createServer(board.node).listen(port)
// --- end of sample ---

export { app, board, hono, server, store }

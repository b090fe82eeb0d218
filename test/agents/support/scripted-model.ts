/** The tests drive agents with the same scripted model as the examples. */
export * from '../../../examples/shared/scripted-model.js'

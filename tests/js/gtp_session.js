// Drive a GTP engine the way the Sabaki editor does, through @sabaki/gtp's
// Controller (stdin stays open until the engine exits): send the commands,
// then stop() it, which sends `quit` and kills the engine if it has not
// exited within the timeout. Prints, as JSON, each response and how the
// engine ended: exit code 0 and no signal mean it exited on its own after `quit`.
// Usage: node gtp_session.js '["cmd", "arg"...]' '[["name", "arg"...]...]' TIMEOUT_MS
'use strict'
const {Controller} = require('@sabaki/gtp')

async function main() {
  const [command, ...args] = JSON.parse(process.argv[2])
  const commands = JSON.parse(process.argv[3])
  const timeout = Number(process.argv[4] || 3000)
  const controller = new Controller(command, args)
  // The library's 'stopped' event reports the exit code under the name
  // `signal`; the process's own exit event tells a code from a kill.
  let exit = {code: 'still running', signal: null}
  controller.start()
  controller.process.once('exit', (code, signal) => { exit = {code, signal} })
  const responses = []
  for (const [name, ...rest] of commands) {
    const response = await controller.sendCommand({name, args: rest})
    responses.push({error: response.error, content: response.content})
  }
  const started = Date.now()
  await controller.stop(timeout)
  const stopSeconds = (Date.now() - started) / 1000
  console.log(JSON.stringify({responses, exitCode: exit.code, signal: exit.signal, stopSeconds}))
}

main().catch(error => { console.error(error); process.exit(1) })

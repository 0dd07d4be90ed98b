// Print, as JSON, what @sabaki/sgf (the parser of the Sabaki editor) reads in
// each SGF file given on the command line: for every game tree, the board
// size, komi, result, setup stones and the main line's moves.
// Vertices are [x, y] from the top-left, as Sabaki uses them; a pass is null.
'use strict'
const sgf = require('@sabaki/sgf')

function vertex(value, size) {
  if (value === '') return null
  const [x, y] = sgf.parseVertex(value)
  if (x < 0 || y < 0 || x >= size || y >= size) return null // 'tt' on small boards
  return [x, y]
}

function mainLine(root) {
  const size = parseInt((root.data.SZ || ['19'])[0], 10)
  const game = {
    size,
    komi: root.data.KM ? parseFloat(root.data.KM[0]) : null,
    result: root.data.RE ? root.data.RE[0] : null,
    black: root.data.PB ? root.data.PB[0] : null,
    white: root.data.PW ? root.data.PW[0] : null,
    setup: {
      black: sgf.parseCompressedVertices ? (root.data.AB || []).flatMap(v => sgf.parseCompressedVertices(v)) : [],
      white: sgf.parseCompressedVertices ? (root.data.AW || []).flatMap(v => sgf.parseCompressedVertices(v)) : []
    },
    moves: []
  }
  let node = root
  while (node) {
    for (const color of ['B', 'W']) {
      if (node.data[color] !== undefined) {
        game.moves.push([color, vertex(node.data[color][0], size)])
      }
    }
    node = node.children[0]
  }
  return game
}

const out = {}
for (const path of process.argv.slice(2)) {
  out[path] = sgf.parseFile(path).map(mainLine)
}
process.stdout.write(JSON.stringify(out))

// A game for boardgame.io shaped like Nautilus Industries as the bench plays it (not a port):
// two seats taking turns, a state G whose JSON is as long as the engine's state
// (QD_BGIO_STATE_BYTES), a move checked against the rules before it is applied, and a
// game that ends after QD_BGIO_MOVES moves.  The bench measures both figures from the
// engine's own random playouts and passes them in the environment.
'use strict';
const { INVALID_MOVE } = require('boardgame.io/core');

const COLOURS = ['Y', 'B', 'K', 'O', 'G'];
const MOVES = Number(process.env.QD_BGIO_MOVES || 935);
const STATE_BYTES = Number(process.env.QD_BGIO_STATE_BYTES || 1136);

function tile() {
  const gems = {};
  const subs = {};
  for (const c of COLOURS) {
    gems[c] = 0;
    subs[c] = null;
  }
  return { gems, subs, moved: false };
}

function setup({ ctx }) {
  const G = {
    round: 1,
    moves: 0,
    bag: Object.fromEntries(COLOURS.map((c) => [c, 12])),
    stock: Object.fromEntries(COLOURS.map((c) => [c, 20])),
    players: Array.from({ length: ctx.numPlayers }, () => ({
      money: 100,
      capacity: 6,
      gems: Object.fromEntries(COLOURS.map((c) => [c, 0])),
    })),
    tiles: [tile(), tile()],
  };
  // Tiles until G's JSON is as long as the engine's state (tiles are ~130 bytes each).
  while (JSON.stringify(G).length + 130 <= STATE_BYTES) G.tiles.push(tile());
  return G;
}

/** The moves `seat` may make in G: place a gem of a colour on a tile, while the bag, the
 * tile's column and the seat's money allow; or pass (earning a little) when none is legal. */
function legal(G, seat) {
  const me = G.players[seat];
  const out = [];
  G.tiles.forEach((t, i) => {
    for (const c of COLOURS) {
      if (G.bag[c] > 0 && t.gems[c] < 9 && me.money >= t.gems[c] + 1) out.push({ tile: i, colour: c });
    }
  });
  return out.length ? out : [{ pass: true }];
}

function same(a, b) {
  return a.pass ? !!b.pass : a.tile === b.tile && a.colour === b.colour;
}

function act({ G, ctx }, choice) {
  const seat = Number(ctx.currentPlayer);
  if (!choice || !legal(G, seat).some((m) => same(m, choice))) return INVALID_MOVE;
  const me = G.players[seat];
  if (choice.pass) {
    me.money += 5;
  } else {
    const t = G.tiles[choice.tile];
    me.money -= t.gems[choice.colour] + 1;
    t.gems[choice.colour] += 1;
    t.moved = true;
    if (t.gems[choice.colour] === 9) {
      t.gems[choice.colour] = 0; // a full column ships and pays
      me.money += 30;
    }
    me.gems[choice.colour] += 1;
    G.bag[choice.colour] -= 1;
    if (G.bag[choice.colour] === 0) G.bag[choice.colour] = 12; // the bag refills, as the market does
  }
  G.moves += 1;
  if (seat === ctx.numPlayers - 1) G.round += 1;
}

const NautilusShaped = {
  name: 'nautilus-shaped',
  setup,
  // client: false: the client waits for the server's state (no optimistic local move),
  // as an HTTP client waits for its answer.
  moves: { act: { move: act, client: false } },
  turn: { minMoves: 1, maxMoves: 1 },
  endIf: ({ G }) => (G.moves >= MOVES ? { winner: G.players[0].money >= G.players[1].money ? '0' : '1' } : undefined),
};

module.exports = { NautilusShaped, legal, MOVES, STATE_BYTES };

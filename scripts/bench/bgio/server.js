// boardgame.io's server for the bench: its socket transport and lobby API on one port,
// matches stored by bgio-postgres in the database given (argv: port, PostgreSQL URL).
'use strict';
const { Server } = require('boardgame.io/server');
const { PostgresStore } = require('bgio-postgres');
const { NautilusShaped } = require('./game');

const [port, url] = process.argv.slice(2);
// Sequelize prints every query unless told not to; its pool (5 connections by default)
// gets one connection per load client, so that the pool does not cap the rate.
const db = new PostgresStore(url, { logging: false, pool: { max: 16 } });
const server = Server({ games: [NautilusShaped], db });
server.run({ port: Number(port) }).then(() => console.log(`bgio server on ${port}`));
// Exit through Node's own exit path when the bench stops it (a --cpu-prof profile is written then).
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));

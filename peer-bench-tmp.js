const net = require('net');
const mode = process.argv[2];
const N = 4000;
const held = [];
const server = net.createServer((s) => {
  if (mode !== 'none') {
    const a = s.remoteAddress;
    if (mode === 'keep') s.addr = a;
    if (mode === 'reset') s._peername = undefined;
    if (mode === 'resetkeep') { s._peername = undefined; s.addr = a; }
  }
  held.push(s);
});
server.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  const clients = [];
  // warm-up
  for (let i = 0; i < 200; i++) clients.push(net.connect(port, '127.0.0.1'));
  await new Promise((r) => setTimeout(r, 500));
  gc(); gc();
  const before = process.memoryUsage().heapUsed;
  const base = held.length;
  for (let i = 0; i < N; i++) { clients.push(net.connect(port, '127.0.0.1')); if (i % 200 === 0) await new Promise((r) => setImmediate(r)); }
  while (held.length < base + N) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 300));
  gc(); gc();
  const after = process.memoryUsage().heapUsed;
  console.log(mode, Math.round((after - before) / N), 'B/socket heap');
  process.exit(0);
});

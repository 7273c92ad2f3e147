// keel: the browser verifier's page logic. MIT licence, see LICENSE.
//
// keel-replay.js (scripts/build-web.sh) is keel-replay compiled to
// WebAssembly with its main() kept. This file has the dropped files written
// into the module's in-memory file system and main() called the way a shell
// would (replay-call.js, in a Worker when it can): `info FILE --json` for the
// header, then `verify FILE --json [--level OBJ]`, and renders what they
// print. The verdict's element (#verdict) carries
// data-result = idle | running | match | diverged | level-needed | error
// and, on a divergence, data-tick, data-character and data-field: the same
// values `keel-replay verify --json` names natively. #module's data-state is
// loading, ready or failed.
//
// Files come from a drop, the file input, or ?rec=URL (and ?level=URL)
// fetched from the page's own server. A recording made on an OBJ level
// needs that file: the page says which one and waits for it.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);

  function moduleState(state, text) {
    $('module').dataset.state = state;
    $('module').textContent = text;
  }

  // Where keel-replay runs: a Worker (replay-call.js) when the page comes
  // from a server, so the page stays responsive while it verifies; on the
  // page's own thread from file:// (browsers start no workers there) or
  // when the worker does not start. call(request) resolves to
  // {rc, out, err} (replay-call.js describes the request) and throws on a
  // trap.
  function onThisThread() {
    const runner = keelReplayRunner();
    return {
      where: "on this page's thread (the page is busy while it verifies)",
      ready: runner,
      call: (request) => runner.then((run) => run(request)),
    };
  }
  function inWorker() {
    const worker = new Worker('replay-call.js');
    const pending = new Map();
    let next = 0;
    const ready = new Promise((resolve, reject) => {
      worker.onmessage = (e) => {
        const m = e.data;
        if (m.ready)
          resolve();
        else if (m.failed)
          reject(new Error(m.failed));
        else {
          pending.get(m.id)(m);
          pending.delete(m.id);
        }
      };
      worker.onerror = (e) => reject(new Error(e.message || 'the worker did not start'));
    });
    return {
      where: 'in a worker of this page',
      ready: ready,
      call: (request) => new Promise((resolve, reject) => {
        pending.set(++next, (m) => (m.trap ? reject(new Error(m.trap)) : resolve(m.result)));
        worker.postMessage({ id: next, request: request });
      }),
    };
  }
  let engine;
  try {
    engine = location.protocol === 'file:' ? onThisThread() : inWorker();
  } catch (e) {
    engine = onThisThread();
  }
  const ready = engine.ready.catch(() => {
    engine = onThisThread();
    return engine.ready;
  });
  ready.then(() => moduleState('ready', 'keel-replay (WebAssembly) is ready; it runs ' + engine.where + '.'),
             (e) => moduleState('failed', 'keel-replay (WebAssembly) failed to load: ' + e));

  function jsonLine(text) {
    const line = text.split('\n').find((l) => l.startsWith('{'));
    if (!line)
      return null;
    try {
      return JSON.parse(line);
    } catch (e) {
      return null;
    }
  }

  function baseName(path) {
    return String(path).split(/[\\/]/).pop() || 'recording.krec';
  }

  // ---- what the page shows ----------------------------------------------------------
  function setVerdict(result, parts, attrs) {
    const v = $('verdict');
    v.dataset.result = result;
    for (const k of ['tick', 'character', 'field'])
      delete v.dataset[k];
    Object.assign(v.dataset, attrs || {});
    v.replaceChildren();
    for (const p of parts) {
      if (p instanceof Node) {
        v.append(p);
      } else if (typeof p === 'object') {
        const b = document.createElement('b');
        b.textContent = p.bold;
        v.append(b);
      } else {
        v.append(String(p));
      }
    }
  }

  function setDetails(text) {
    const d = $('details');
    d.textContent = text;
    d.hidden = !text;
  }

  function levelText(l) {
    if (l.kind === 'builtin')
      return 'built-in';
    if (l.kind === 'generated')
      return 'generated, ' + l.generate_triangles + ' triangles, seed ' + l.generate_seed;
    return l.path + ' (scale ' + l.scale + ', up ' + l.up + ')';
  }

  function showInfo(name, i) {
    const rows = [
      ['file', name + ', ' + i.bytes + ' bytes, ' +
               (i.complete ? 'complete' : 'truncated at offset ' + i.truncated_at)],
      ['kind', i.kind + ' recording from ' + (i.source || '?')],
      ['made by build', i.build_id || '?'],
      ['versions', 'format ' + i.format_version + ', behaviour ' + i.behaviour_version],
      ['level', levelText(i.level) + ', digest ' + i.level.digest],
      ['length', i.ticks + ' ticks from tick ' + i.first_tick + ' (' + i.seconds.toFixed(2) + ' s at ' +
                 i.tick_rate + ' Hz)'],
      ['players', i.players + ' distinct, at most ' + i.max_characters_seen + ' at once; ' + i.joins +
                  ' joins, ' + i.leaves + ' leaves'],
      ['keyframes', i.keyframe_interval === 0 ? 'none'
        : i.keyframe_interval === 1 ? 'every tick (full state: fields are named), ' + i.keyframes
        : 'every ' + i.keyframe_interval + ' ticks, ' + i.keyframes],
      ['last hash', i.last_hash],
    ];
    const t = $('info');
    t.replaceChildren();
    for (const [k, v] of rows) {
      const tr = document.createElement('tr');
      const th = document.createElement('th');
      const td = document.createElement('td');
      th.textContent = k;
      td.textContent = v;
      tr.append(th, td);
      t.append(tr);
    }
    $('recording').hidden = false;
  }

  // The text `keel-replay verify` prints for a divergence, from its JSON.
  function divergenceText(name, r) {
    const lines = r.notes.map((n) => 'note: ' + n);
    lines.push('keel-replay: ' + name + ': diverged (recorded vs re-simulated): ' + r.detail);
    if (r.fields.length && r.values_source)
      lines.push((r.values_exact ? 'values' : 'hint: values') + ' from ' + r.values_source + ':');
    for (const f of r.fields) {
      lines.push((r.values_exact || f.kind !== 'state' ? '' : 'hint: ') + 'tick ' + f.tick + ' character ' +
                 f.character + ' ' + f.field + ': ' + f.a.decimal + ' (' + f.a.hex + ') vs ' + f.b.decimal +
                 ' (' + f.b.hex + ')');
    }
    if (r.values_truncated)
      lines.push('(more values differ than listed)');
    return lines.join('\n');
  }

  // A client recording's result names its count by what it counts:
  // {"result":"match","kind":"client","confirmed ticks reproduced by the client library":N}
  function clientCount(r) {
    const key = Object.keys(r).find((k) => typeof r[k] === 'number' && k !== 'tick');
    return key ? r[key] + ' ' + key : 'reproduced by the client library';
  }

  // ---- one verification -----------------------------------------------------------------
  let recording = null; // {name, bytes}
  let level = null;     // {name, bytes}

  const paint = () => new Promise((resolve) => setTimeout(resolve, 30));

  async function verify() {
    if (!recording)
      return;
    try {
      await ready;
    } catch (e) {
      setVerdict('error', [{ bold: 'error' }, ': keel-replay (WebAssembly) did not load: ' + e]);
      return;
    }
    const file = '/in/' + recording.name;
    const info = await engine.call({ files: [recording], args: ['info', file, '--json'] });
    const i = jsonLine(info.out);
    if (info.rc !== 0 || !i) {
      $('recording').hidden = true;
      setVerdict('error', [{ bold: 'error' }, ': ' + recording.name + ' is not a readable keel recording.']);
      setDetails(info.err.split(file).join(recording.name));
      return;
    }
    showInfo(recording.name, i);

    const args = ['verify', file, '--json'];
    if (i.level.kind === 'obj') {
      if (!level) {
        setVerdict('level-needed', [{ bold: 'level needed' }, ': this recording was made on the map ' +
          baseName(i.level.path) + ' (recorded as ' + i.level.path + ', digest ' + i.level.digest +
          '). Drop that .obj file here to verify it.']);
        setDetails('');
        return;
      }
      args.push('--level', '/in/' + level.name);
    }

    // keel-replay --json reports only at the end: an indeterminate bar
    // (it moves while a worker verifies).
    setVerdict('running', ['Re-simulating ' + i.ticks + ' ticks, ' + i.character_ticks + ' character-ticks… ',
      document.createElement('progress')]);
    setDetails('');
    await paint();
    const t0 = performance.now();
    const v = await engine.call({ add: i.level.kind === 'obj' ? [level] : [], args: args });
    const seconds = (performance.now() - t0) / 1000;
    const r = jsonLine(v.out);
    // keel-replay names its files by path: show the names the user knows.
    const named = (s) => s.split(file).join(recording.name);
    const speed = seconds > 0 ? ' Re-simulated in ' + seconds.toFixed(2) + ' s in this browser.' : '';
    const client = r && r.kind === 'client'; // replayed call by call: hashes of confirmed ticks
    if (v.rc === 0 && r && r.result === 'match') {
      setVerdict('match', [{ bold: 'match' }, client
        ? ': ' + clientCount(r) + '.' + speed
        : ': all ' + r.ticks_compared + ' ticks reproduced, ' + i.character_ticks +
          ' character-ticks; last world hash ' + r.hash + '.' + speed]);
      setDetails(named(v.err));
    } else if (v.rc === 1 && r && r.result === 'diverged' && client) {
      setVerdict('diverged', [{ bold: 'diverged' }, ' at tick ' + r.tick + '.' + speed], { tick: String(r.tick) });
      setDetails('keel-replay: ' + recording.name + ': diverged at tick ' + r.tick + ': ' + r.detail);
    } else if (v.rc === 1 && r && r.result === 'diverged') {
      const field = r.field === null ? 'field not named (no full-state keyframe right after it: record with --record-full)'
                                     : 'field ' + r.field;
      setVerdict('diverged', [{ bold: 'diverged' }, ' at tick ' + r.tick + ', character ' + r.character + ', ' +
        field + '.' + speed],
        { tick: String(r.tick), character: String(r.character), field: r.field === null ? '' : r.field });
      setDetails(divergenceText(recording.name, r) + (v.err ? '\n' + named(v.err) : ''));
    } else {
      setVerdict('error', [{ bold: 'error' }, ': keel-replay could not verify ' + recording.name +
        ' (exit code ' + v.rc + ').']);
      setDetails(named(v.err || v.out));
    }
  }

  // ---- where files come from --------------------------------------------------------------
  async function take(files) {
    for (const f of files) {
      const entry = { name: baseName(f.name), bytes: new Uint8Array(await f.arrayBuffer()) };
      if (/\.obj$/i.test(f.name)) {
        level = entry;
      } else {
        recording = entry;
      }
    }
    if (!recording) {
      setVerdict('idle', ['A map on its own: now drop the recording made on it.']);
      return;
    }
    try {
      await verify();
    } catch (e) {
      // A trap in the module (it aborts and cannot run again) or a file
      // that could not be read.
      setVerdict('error', [{ bold: 'error' }, ': ' + e + '. Reload the page to verify another recording.']);
    }
  }

  const drop = $('drop');
  document.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  document.addEventListener('dragleave', () => drop.classList.remove('over'));
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    take(Array.from(e.dataTransfer.files));
  });
  $('pick').addEventListener('change', (e) => take(Array.from(e.target.files)));

  async function fetched(url) {
    const res = await fetch(url);
    if (!res.ok)
      throw new Error(url + ': HTTP ' + res.status);
    return { name: baseName(new URL(url, location.href).pathname), arrayBuffer: () => res.arrayBuffer() };
  }

  const query = new URLSearchParams(location.search);
  if (query.get('rec')) {
    const urls = [query.get('rec')];
    if (query.get('level'))
      urls.push(query.get('level'));
    setVerdict('running', ['Fetching ' + urls.join(' and ') + '…']);
    Promise.all(urls.map(fetched)).then((files) => take(files), (e) => {
      setVerdict('error', [{ bold: 'error' }, ': ' + e.message]);
    });
  }
})();

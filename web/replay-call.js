// keel: calls of keel-replay's main() in its WebAssembly module, in a Worker
// or on the page's own thread. MIT licence, see LICENSE.
//
// keelReplayRunner() makes the module (keel-replay.js, KeelReplay) and
// resolves to run(request), which does one call the way a shell would:
//   request.files  [{name, bytes}]: /in/ is emptied and these written there
//   request.add    [{name, bytes}]: written into /in/ beside what is there
//   request.args   keel-replay's arguments (paths under /in/)
// and returns {rc, out, err}: the exit code and the lines printed to stdout
// and stderr. A trap in the module throws (the module cannot run again).
//
// Loaded as a Worker's script (verifier.js starts one when the page comes
// from a server), it imports keel-replay.js, posts {ready} or {failed}, and
// answers each {id, request} with {id, result} or {id, trap}.
'use strict';

function keelReplayRunner() {
  let out = [];
  let err = [];
  const made = KeelReplay({ print: (line) => out.push(line), printErr: (line) => err.push(line) });
  return made.then((mod) => {
    mod.FS.mkdir('/in');
    const write = (files) => {
      for (const f of files || [])
        mod.FS.writeFile('/in/' + f.name, f.bytes);
    };
    return (request) => {
      if (request.files) {
        for (const name of mod.FS.readdir('/in'))
          if (name !== '.' && name !== '..')
            mod.FS.unlink('/in/' + name);
        write(request.files);
      }
      write(request.add);
      out = [];
      err = [];
      const rc = mod.callMain(request.args);
      return { rc: rc, out: out.join('\n'), err: err.join('\n') };
    };
  });
}

if (typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope) {
  importScripts('keel-replay.js');
  const runner = keelReplayRunner();
  runner.then(() => postMessage({ ready: true }), (e) => postMessage({ failed: String(e) }));
  onmessage = (e) => runner.then((run) => {
    try {
      postMessage({ id: e.data.id, result: run(e.data.request) });
    } catch (x) {
      postMessage({ id: e.data.id, trap: String(x) });
    }
  });
}

// keel programs built for WebAssembly (Emscripten) and run under Node: the
// environment. MIT licence, see LICENSE.
//
// Emscripten's getenv sees only its own defaults (USER, PATH, HOME, LANG...),
// not the variables Node was started with, so KEEL_LEVELS_DIR (where
// keel-replay looks for a recording's level) would be lost. Linked with
// --pre-js, this copies Node's environment into Emscripten's before main
// runs; the host's values win over the defaults. (A program that never
// calls getenv has no ENV: nothing to do.)
Module['preRun'] = Module['preRun'] || [];
Module['preRun'].push(function () {
    if (typeof ENV === 'object' && typeof process === 'object' && process.env) {
        for (var name in process.env)
            ENV[name] = process.env[name];
    }
});

// Preloaded with `--import`: writes the URL of every module the process imports, a line each, to
// the file LOADED_MODULES_FILE names, so that a test can tell which packages a start loaded.
import { register } from 'node:module';

register('./loadedModulesHooks.mjs', import.meta.url, { data: process.env.LOADED_MODULES_FILE });

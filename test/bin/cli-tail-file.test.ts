/** `logkeep tail` through 200 cut connections and two restarts, against the file backend (see cli-commands.ts). */
import { cliSuite } from './cli-commands.js';

cliSuite('file', 'tail');

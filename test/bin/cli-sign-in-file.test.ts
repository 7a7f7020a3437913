/** The client commands' sign-in part against the file backend (see cli-commands.ts). */
import { cliSuite } from './cli-commands.js';

cliSuite('file', 'sign-in');

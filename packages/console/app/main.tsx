/** @module The console's entry: renders the app into `#root`. */
import { render } from 'preact';
import { App } from './app.tsx';

render(<App />, document.getElementById('root')!);

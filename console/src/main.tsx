import { render } from 'preact';
import './styles.css';

function App() {
  return <main><h1>logkeep</h1></main>;
}

render(<App />, document.getElementById('app')!);

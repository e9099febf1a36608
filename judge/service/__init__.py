"""The grading service (`judge serve`): an HTTP API over the same engine as the CLI.

    app = create_app(load_service_config(Path("service.yaml"), os.environ))
    uvicorn.run(app, host="127.0.0.1", port=8080)

`judge.service.config` reads the configuration; the app, its routes, the job store and
runner, the HTTP guards and the request models are private modules of this package.
"""

from judge.service._app import create_app
from judge.service.config import ServiceConfig, load_service_config

__all__ = ["ServiceConfig", "create_app", "load_service_config"]

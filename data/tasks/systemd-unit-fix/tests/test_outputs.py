import configparser


def unit():
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str
    cp.read("/app/webapp.service")
    return cp


def test_sections():
    u = unit()
    assert set(u.sections()) == {"Unit", "Service", "Install"}
    assert not {"User", "ExecStart", "Restart"} & set(u["Unit"])


def test_exec_start_absolute():
    assert unit()["Service"]["ExecStart"].split() == ["/usr/bin/python3", "/opt/webapp/server.py", "--port", "8080"]


def test_restart_policy():
    assert unit()["Service"]["Restart"] == "on-failure"


def test_install_target():
    assert unit()["Install"]["WantedBy"] == "multi-user.target"


def test_settings_kept():
    u = unit()
    assert u["Unit"]["Description"] == "Example web application"
    assert u["Unit"]["After"] == "network.target"
    assert u["Service"]["User"] == "webapp"
    assert u["Service"]["RestartSec"] == "5"
    assert u["Service"]["Environment"] == "APP_ENV=production"

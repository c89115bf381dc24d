from pathlib import Path

EXPECTED = ['email,last_name,first_name', 'ada.novak@corp.example,Novak,Ada', 'boris.li@corp.example,Li,Boris', 'chen.smith@corp.example,Smith,Chen', 'dana.novak@corp.example,Novak,Dana', 'emeka.tanaka@corp.example,Tanaka,Emeka', 'freya.haddad@corp.example,Haddad,Freya', 'goran.tanaka@corp.example,Tanaka,Goran', 'hana.novak@corp.example,Novak,Hana', 'ines.haddad@corp.example,Haddad,Ines', 'jomo.smith@corp.example,Smith,Jomo', 'keiko.tanaka@corp.example,Tanaka,Keiko', 'luis.okafor@corp.example,Okafor,Luis', 'mona.okafor@corp.example,Okafor,Mona', 'nils.tanaka@corp.example,Tanaka,Nils']


def test_directory_columns():
    lines = [l.rstrip("\r") for l in Path("/app/directory.csv").read_text().splitlines() if l.strip()]
    assert lines == EXPECTED
